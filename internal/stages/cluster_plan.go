package stages

import (
	"context"
	"fmt"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/handoff"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// Plan implements pipeline.Planner.
func (st Install) Plan(_ context.Context, env *pipeline.Env) ([]string, error) {
	s := env.Site
	return []string{
		fmt.Sprintf("openshift-install agent wait-for bootstrap-complete (timeout %s), then install-complete (timeout %s)",
			s.Cluster.Installer.BootstrapTimeout, s.Cluster.Installer.InstallTimeout),
		fmt.Sprintf("follow host validations on the rendezvous host %s:8090", s.Cluster.RendezvousIP),
		fmt.Sprintf("then check ClusterVersion Available, no ClusterOperator Degraded, %d nodes Ready; kubeconfig to %s", len(s.Nodes), Kubeconfig(env.WorkDir)),
		"on failure: gather node journals (SSH), BMC event logs (Redfish) and the journal into a tarball",
	}, nil
}

// Plan implements pipeline.Planner: the objects it would apply (from the files present now).
func (st Configure) Plan(_ context.Context, env *pipeline.Env) ([]string, error) {
	o := configureOptions(env)
	objs, srcs, err := cluster.Objects(o)
	if err != nil {
		return nil, err
	}
	var lines []string
	for i, u := range objs {
		lines = append(lines, fmt.Sprintf("server-side apply %s (%s)", cluster.RefOf(u), srcs[i]))
	}
	lines = append(lines, "wait for every CatalogSource READY and every MachineConfigPool Updated")
	for _, b := range o.Blacklists {
		lines = append(lines, fmt.Sprintf("verify %s blacklisted on the nodes of pools %s (rendered config and lsmod)",
			strings.Join(b.Modules, ","), strings.Join(b.Pools, ",")))
	}
	return lines, nil
}

// Plan implements pipeline.Planner.
func (st Handoff) Plan(_ context.Context, env *pipeline.Env) ([]string, error) {
	g := env.Site.GitOps
	src, err := gitopsSource(env.WorkDir)
	if err != nil {
		src = "(no catalog yet: " + err.Error() + ")"
	}
	root := g.RootApp.Name
	if root == "" {
		root = "root"
	}
	return []string{
		fmt.Sprintf("prove from the jump host that %s has revision %q and path %q", g.RepoURL, g.Revision, g.Path),
		fmt.Sprintf("subscribe to %s channel %s from %s (%s approval)", handoff.OperatorPackage, g.Channel, src, g.InstallPlanApproval),
		fmt.Sprintf("wait for the Argo CD instance: ArgoCD %s/%s Available (the server Deployment when that kind is not served)", handoff.ArgoNamespace, handoff.InstanceName),
		fmt.Sprintf("repository secret %s/%s, root application %s/%s (path %s), %d ApplicationSet files",
			handoff.ArgoNamespace, handoff.RepoSecretName, handoff.ArgoNamespace, root, g.Path, len(g.ApplicationSets)),
		fmt.Sprintf("wait up to %s for %s Synced and Healthy", g.Timeout, root),
	}, nil
}
