package harness

import (
	"errors"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// subscriptions plays OLM resolving each Subscription: an InstallPlan for the package's CSV
// (approved at once when approval is Automatic) and the Subscription's status pointing at both.
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
		csv := pkg + ".v1.0.0"
		if pkg == gitopsPackage {
			csv = gitopsCSV
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
		}))
	}
	return errors.Join(errs...)
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
	}
	if !strings.HasPrefix(name, gitopsPackage+".") {
		return nil
	}
	return p.argoInstance()
}

// argoInstance is what the GitOps operator creates for the default Argo CD instance.
func (p *player) argoInstance() error {
	if _, err := p.create(gvrNS, "", map[string]any{"metadata": map[string]any{"name": argoNamespace}}); err != nil {
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

// applications plays Argo CD: each Application syncs its source at the Git server's head and
// reports Healthy.
func (p *player) applications() error {
	apps, err := p.list(gvrApp, func() (*unstructured.UnstructuredList, error) {
		return p.d.Resource(gvrApp).List(p.ctx, metav1.ListOptions{})
	})
	if err != nil {
		return err
	}
	var errs []error
	for i := range apps {
		a := &apps[i]
		if nested(a, "status", "sync", "status") == "Synced" && nested(a, "status", "health", "status") == "Healthy" {
			continue
		}
		rev := ""
		if p.c.Git != nil {
			rev, err = p.c.Git.Head(nested(a, "spec", "source", "targetRevision"))
			if err != nil {
				errs = append(errs, p.status(gvrApp, a.GetNamespace(), a.GetName(), map[string]any{
					"sync":   map[string]any{"status": "Unknown"},
					"health": map[string]any{"status": "Missing", "message": err.Error()}}))
				continue
			}
		}
		errs = append(errs, p.status(gvrApp, a.GetNamespace(), a.GetName(), map[string]any{
			"sync":         map[string]any{"status": "Synced", "revision": rev},
			"health":       map[string]any{"status": "Healthy"},
			"reconciledAt": now(),
			"operationState": map[string]any{"phase": "Succeeded", "message": "successfully synced (all tasks run)",
				"startedAt": now(), "finishedAt": now(), "operation": map[string]any{"sync": map[string]any{"revision": rev}}},
		}))
	}
	return errors.Join(errs...)
}
