package handoff

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
)

// The default Argo CD instance the OpenShift GitOps operator creates. Its ArgoCD resource is the
// operator's own verdict on the instance; its CRD ships with the operator (argocd-operator's
// argoproj.io_argocds.yaml), not with Argo CD, so it is served only once the operator's CSV has
// installed it.
const (
	ArgoV1b1     = "argoproj.io/v1beta1"
	InstanceName = "openshift-gitops"
)

// instanceRef is the ArgoCD resource of the default instance.
func instanceRef() cluster.Ref {
	return cluster.Ref{APIVersion: ArgoV1b1, Kind: "ArgoCD", Namespace: ArgoNamespace, Name: InstanceName}
}

// WaitInstance waits for the default Argo CD instance: by its ArgoCD resource (status.phase
// Available and status.server Running) when the cluster serves that kind, else by the server
// Deployment being Available. It returns the object it judged by ("ArgoCD
// openshift-gitops/openshift-gitops" or "Deployment openshift-gitops/openshift-gitops-server").
func WaitInstance(ctx context.Context, c *cluster.Client, timeout time.Duration, progress cluster.Progress) (string, error) {
	served, err := c.Served(ArgoV1b1, "ArgoCD")
	if err != nil {
		return "", fmt.Errorf("argo cd instance: discovery: %w", err)
	}
	if !served {
		ref := cluster.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ArgoNamespace, Name: ServerDeployment}
		if progress != nil {
			progress(fmt.Sprintf("the cluster does not serve %s ArgoCD: judging the Argo CD instance by %s", ArgoV1b1, ref))
		}
		if err := c.Wait(ctx, ref, "Available", timeout, cluster.DeploymentAvailable, progress); err != nil {
			return ref.String(), fmt.Errorf("argo cd instance: %w", err)
		}
		return ref.String(), nil
	}
	ref := instanceRef()
	if err := c.Wait(ctx, ref, "Available", timeout, ArgoCDAvailable, progress); err != nil {
		return ref.String(), fmt.Errorf("argo cd instance: %w", err)
	}
	return ref.String(), nil
}

// argoComponents are the status fields of an ArgoCD resource that report one component each
// (Unknown, Pending, Running or Failed).
var argoComponents = []string{"server", "repo", "applicationController", "redis", "applicationSetController", "sso", "notificationsController"}

// ArgoCDAvailable is done when an ArgoCD resource reports phase Available with its server
// Running, and fails when its phase is Failed or a component is Failed, naming the components.
func ArgoCDAvailable(u *unstructured.Unstructured) (cluster.State, string) {
	if u == nil {
		return cluster.Pending, "the operator has not created the instance yet"
	}
	phase, server := nested(u, "status", "phase"), nested(u, "status", "server")
	var failed, waiting []string
	for _, comp := range argoComponents {
		switch st := nested(u, "status", comp); st {
		case "Failed":
			failed = append(failed, comp)
		case "", "Running":
		default:
			if comp == "server" {
				continue // in the message already
			}
			waiting = append(waiting, comp+" "+st)
		}
	}
	sort.Strings(failed)
	msg := fmt.Sprintf("phase %s, server %s", orUnknown(phase), orUnknown(server))
	if s, reason, m, ok := cluster.Condition(u, "Reconciled"); ok && s == "False" {
		msg += fmt.Sprintf("; not reconciled (%s): %s", reason, m)
	}
	switch {
	case phase == "Failed" || len(failed) > 0:
		if len(failed) > 0 {
			msg += "; failed: " + strings.Join(failed, ", ")
		}
		return cluster.Failed, msg
	case phase == "Available" && server == "Running":
		return cluster.Done, "Available, server Running"
	}
	if len(waiting) > 0 {
		msg += "; waiting for " + strings.Join(waiting, ", ")
	}
	return cluster.Pending, msg
}
