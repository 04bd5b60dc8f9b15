package harness

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

// subscriptions plays OLM resolving each Subscription against the lab's catalogs: when its
// CatalogSource exists and carries the package, an InstallPlan for the channel head's CSV
// (approved at once when approval is Automatic) and the Subscription's status pointing at both;
// else ResolutionFailed or CatalogSourcesUnhealthy, with OLM's wording.
func (p *player) subscriptions() error {
	subs, err := p.list(gvrSub, func() (*unstructured.UnstructuredList, error) {
		return p.d.Resource(gvrSub).List(p.ctx, metav1.ListOptions{})
	})
	if err != nil {
		return err
	}
	var errs []error
	for i := range subs {
		sub := &subs[i]
		if nested(sub, "status", "currentCSV") != "" {
			continue
		}
		pkg, ns := nested(sub, "spec", "name"), sub.GetNamespace()
		src, srcNS := nested(sub, "spec", "source"), nested(sub, "spec", "sourceNamespace")
		if _, err := p.d.Resource(gvrCatalog).Namespace(srcNS).Get(p.ctx, src, metav1.GetOptions{}); err != nil {
			errs = append(errs, p.unresolved(sub, cond("CatalogSourcesUnhealthy", "True", "UnhealthyCatalogSourceFound",
				fmt.Sprintf("targeted catalogsource %s/%s missing", srcNS, src))))
			continue
		}
		csv, ok := channelHead(pkg, nested(sub, "spec", "channel"))
		if !ok {
			errs = append(errs, p.unresolved(sub, cond("ResolutionFailed", "True", "ConstraintsNotSatisfiable",
				fmt.Sprintf("no operators found in package %s in the catalog referenced by subscription %s", pkg, sub.GetName()))))
			continue
		}
		approval := nested(sub, "spec", "installPlanApproval")
		if approval == "" {
			approval = "Automatic"
		}
		plan := "install-" + shortHash(ns, pkg)[:5]
		ip, err := p.create(gvrPlan, ns, map[string]any{
			"metadata": map[string]any{"name": plan, "namespace": ns},
			"spec": map[string]any{"approval": approval, "approved": approval == "Automatic",
				"clusterServiceVersionNames": []any{csv}, "generation": int64(1)},
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, p.status(gvrSub, ns, sub.GetName(), map[string]any{
			"currentCSV": csv, "state": "UpgradePending", "lastUpdated": now(),
			"installPlanRef": map[string]any{"apiVersion": gvrPlan.GroupVersion().String(), "kind": "InstallPlan",
				"name": plan, "namespace": ns, "uid": string(ip.GetUID())},
			"installplan": map[string]any{"apiVersion": gvrPlan.GroupVersion().String(), "kind": "InstallPlan",
				"name": plan, "uuid": string(ip.GetUID())},
			"catalogHealth": []any{},
			"conditions":    []any{cond("CatalogSourcesUnhealthy", "False", "AllCatalogSourcesHealthy", "all available catalogsources are healthy")},
		}))
	}
	return errors.Join(errs...)
}

// unresolved writes a Subscription OLM cannot resolve, once.
func (p *player) unresolved(sub *unstructured.Unstructured, c map[string]any) error {
	conds, _, _ := unstructured.NestedSlice(sub.Object, "status", "conditions")
	for _, x := range conds {
		if m, _ := x.(map[string]any); m["type"] == c["type"] && m["message"] == c["message"] {
			return nil
		}
	}
	return p.status(gvrSub, sub.GetNamespace(), sub.GetName(), map[string]any{"lastUpdated": now(), "conditions": []any{c}})
}

// channelHead is the CSV name of the head of a package's channel (its default channel when
// channel is "") in the lab's catalogs.
func channelHead(pkg, channel string) (string, bool) {
	for _, ps := range append(append([]mirrortest.PackageSpec(nil), redhatPackages...), certifiedPackages...) {
		if ps.Name != pkg {
			continue
		}
		if channel == "" {
			channel = ps.DefaultChannel
		}
		vs := ps.Channels[channel]
		if len(vs) == 0 {
			return "", false
		}
		return pkg + ".v" + vs[len(vs)-1], true
	}
	return "", false
}

// csvs plays OLM installing approved plans: the CSV appears (Installing), succeeds on the next
// pass, and for the GitOps operator the default Argo CD instance (namespace, server Deployment
// available, Route) comes up.
func (p *player) csvs() error {
	plans, err := p.list(gvrPlan, func() (*unstructured.UnstructuredList, error) {
		return p.d.Resource(gvrPlan).List(p.ctx, metav1.ListOptions{})
	})
	if err != nil {
		return err
	}
	var errs []error
	for i := range plans {
		ip := &plans[i]
		if ok, _, _ := unstructured.NestedBool(ip.Object, "spec", "approved"); !ok {
			continue
		}
		names, _, _ := unstructured.NestedStringSlice(ip.Object, "spec", "clusterServiceVersionNames")
		for _, name := range names {
			errs = append(errs, p.csv(ip, name))
		}
	}
	return errors.Join(errs...)
}

func (p *player) csv(ip *unstructured.Unstructured, name string) error {
	ns := ip.GetNamespace()
	u, err := p.create(gvrCSV, ns, map[string]any{
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{"displayName": strings.SplitN(name, ".", 2)[0], "version": strings.TrimPrefix(name[strings.Index(name, ".v")+1:], "v"),
			"install": map[string]any{"strategy": "deployment", "spec": map[string]any{"deployments": []any{}}}},
	})
	if err != nil {
		return err
	}
	switch nested(u, "status", "phase") {
	case "Succeeded":
	case "":
		if nested(ip, "status", "phase") != "Complete" {
			if err := p.status(gvrPlan, ns, ip.GetName(), map[string]any{"phase": "Complete", "catalogSources": []any{}}); err != nil {
				return err
			}
		}
		return p.status(gvrCSV, ns, name, map[string]any{"phase": "Installing", "reason": "InstallWaiting",
			"message": "installing: waiting for deployment to become ready", "lastTransitionTime": now(), "lastUpdateTime": now()})
	default:
		if err := p.status(gvrCSV, ns, name, map[string]any{"phase": "Succeeded", "reason": "InstallSucceeded",
			"message": "install strategy completed with no errors", "lastTransitionTime": now(), "lastUpdateTime": now()}); err != nil {
			return err
		}
		if err := p.installed(ns, name); err != nil {
			return err
		}
	}
	if !strings.HasPrefix(name, gitopsPackage+".") {
		return nil
	}
	return p.argoInstance()
}

// installed marks the Subscriptions whose CSV succeeded as OLM does: AtLatestKnown, installedCSV.
func (p *player) installed(ns, csv string) error {
	subs, err := p.d.Resource(gvrSub).Namespace(ns).List(p.ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range subs.Items {
		sub := &subs.Items[i]
		if nested(sub, "status", "currentCSV") != csv || nested(sub, "status", "state") == "AtLatestKnown" {
			continue
		}
		st, _, _ := unstructured.NestedMap(sub.Object, "status")
		st["state"], st["installedCSV"], st["lastUpdated"] = "AtLatestKnown", csv, now()
		if err := p.status(gvrSub, ns, sub.GetName(), st); err != nil {
			return err
		}
	}
	return nil
}

// argoInstance is what the GitOps operator does for the default Argo CD instance: the
// namespace, then Argo CD itself (argocdtest: its configuration and its own controllers, started
// once, in the background), and once those run, the server Deployment marked available and its
// Route. No argocd-server (UI and API) runs: the Deployment is what the handoff judges the
// instance by when the cluster does not serve the operator's ArgoCD kind.
func (p *player) argoInstance() error {
	if _, err := p.create(gvrNS, "", map[string]any{"metadata": map[string]any{"name": argoNamespace}}); err != nil {
		return err
	}
	if ready, err := p.c.startArgo(p.ctx, p.d); err != nil || !ready {
		return err
	}
	d, err := p.create(gvrDeploy, argoNamespace, map[string]any{
		"metadata": map[string]any{"name": argoServer, "namespace": argoNamespace},
		"spec": map[string]any{"replicas": int64(1),
			"selector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": argoServer}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/name": argoServer}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "argocd-server", "image": "registry.redhat.io/openshift-gitops-1/argocd-rhel9:v1.16.0"}}}}},
	})
	if err != nil {
		return err
	}
	if n, _, _ := unstructured.NestedInt64(d.Object, "status", "availableReplicas"); n >= 1 {
		return nil
	}
	if _, err := p.create(gvrRoute, argoNamespace, map[string]any{
		"metadata": map[string]any{"name": argoServer, "namespace": argoNamespace},
		"spec": map[string]any{"host": argoServer + "-" + argoNamespace + ".apps." + ClusterName + "." + BaseDomain,
			"to": map[string]any{"kind": "Service", "name": argoServer}, "tls": map[string]any{"termination": "reencrypt"}},
	}); err != nil {
		return err
	}
	return p.status(gvrDeploy, argoNamespace, argoServer, map[string]any{
		"observedGeneration": d.GetGeneration(), "replicas": int64(1), "readyReplicas": int64(1),
		"availableReplicas": int64(1), "updatedReplicas": int64(1),
		"conditions": []any{
			map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability.", "lastTransitionTime": now(), "lastUpdateTime": now()},
			map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "message": "ReplicaSet has successfully progressed.", "lastTransitionTime": now(), "lastUpdateTime": now()},
		},
	})
}
