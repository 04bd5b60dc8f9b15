package harness

import (
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// reconcile is one pass of the controllers the player stands in for: the Machine Config
// Operator (render, roll out), OLM (catalogs, subscriptions, install plans, CSVs) and the GitOps
// operator (which starts Argo CD's own controllers; Applications are theirs).
func (p *player) reconcile() error {
	return errors.Join(p.join(), p.catalogs(), p.pools(), p.subscriptions(), p.csvs())
}

// join adds the nodes given to Cluster.Join whose BMC booted the ISO: the host installs and the
// Node becomes Ready.
func (p *player) join() error {
	nodes, err := p.c.joining()
	if err != nil {
		return fmt.Errorf("lab player: nodes to join: %w", err)
	}
	for _, n := range nodes {
		if err := p.node(n, true); err != nil {
			return err
		}
		p.c.api.SetHost(n.Name, n.Role, "installed", "Done")
		p.c.setJoined(n.Name)
	}
	return nil
}

func (p *player) list(gvr interface{ String() string }, do func() (*unstructured.UnstructuredList, error)) ([]unstructured.Unstructured, error) {
	l, err := do()
	if err != nil {
		return nil, fmt.Errorf("lab player: list %s: %w", gvr, err)
	}
	return l.Items, nil
}

// catalogs plays OLM's catalog operator: every CatalogSource's gRPC connection becomes READY.
func (p *player) catalogs() error {
	items, err := p.list(gvrCatalog, func() (*unstructured.UnstructuredList, error) {
		return p.d.Resource(gvrCatalog).List(p.ctx, metav1.ListOptions{})
	})
	if err != nil {
		return err
	}
	var errs []error
	for _, cs := range items {
		if nested(&cs, "status", "connectionState", "lastObservedState") == "READY" {
			continue
		}
		errs = append(errs, p.status(gvrCatalog, cs.GetNamespace(), cs.GetName(), map[string]any{
			"connectionState": map[string]any{"address": cs.GetName() + "." + cs.GetNamespace() + ".svc:50051",
				"lastConnect": now(), "lastObservedState": "READY"},
			"registryService": map[string]any{"protocol": "grpc", "serviceName": cs.GetName(), "serviceNamespace": cs.GetNamespace(), "port": "50051"},
		}))
	}
	return errors.Join(errs...)
}

// pools plays the Machine Config Operator: each pool's rendered config merges the MachineConfigs
// its selector picks; a new rendered config rolls out (Updating, then Updated after a moment)
// and the pool's nodes are annotated with it.
func (p *player) pools() error {
	pools, err := p.list(gvrPool, func() (*unstructured.UnstructuredList, error) {
		return p.d.Resource(gvrPool).List(p.ctx, metav1.ListOptions{})
	})
	if err != nil {
		return err
	}
	mcs, err := p.list(gvrMC, func() (*unstructured.UnstructuredList, error) {
		return p.d.Resource(gvrMC).List(p.ctx, metav1.ListOptions{})
	})
	if err != nil {
		return err
	}
	var errs []error
	for i := range pools {
		errs = append(errs, p.pool1(&pools[i], mcs))
	}
	return errors.Join(errs...)
}

func (p *player) pool1(pool *unstructured.Unstructured, mcs []unstructured.Unstructured) error {
	ml, _, _ := unstructured.NestedMap(pool.Object, "spec", "machineConfigSelector")
	var ls metav1.LabelSelector
	if m, ok := ml["matchLabels"].(map[string]any); ok {
		ls.MatchLabels = map[string]string{}
		for k, v := range m {
			ls.MatchLabels[k], _ = v.(string)
		}
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil || sel.Empty() {
		return err
	}
	var files, kargs, sources, ids []any
	var parts []string
	for i := range mcs {
		mc := &mcs[i]
		if !sel.Matches(labels.Set(mc.GetLabels())) {
			continue
		}
		parts = append(parts, mc.GetName()+"@"+fmt.Sprint(mc.GetGeneration()))
		sources = append(sources, map[string]any{"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig", "name": mc.GetName()})
		f, _, _ := unstructured.NestedSlice(mc.Object, "spec", "config", "storage", "files")
		files = append(files, f...)
		k, _, _ := unstructured.NestedSlice(mc.Object, "spec", "kernelArguments")
		kargs = append(kargs, k...)
		ids = append(ids, mc.GetName())
	}
	rendered := "rendered-" + pool.GetName() + "-" + shortHash(parts...)
	if _, err := p.create(gvrMC, "", map[string]any{
		"metadata": map[string]any{"name": rendered, "annotations": map[string]any{"lab.bootstrap.test/sources": fmt.Sprint(ids...)},
			"ownerReferences": []any{map[string]any{"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigPool",
				"name": pool.GetName(), "uid": string(pool.GetUID()), "controller": true}}},
		"spec": map[string]any{"config": map[string]any{"ignition": map[string]any{"version": "3.4.0"},
			"storage": map[string]any{"files": nonNil(files)}}, "kernelArguments": nonNil(kargs)},
	}); err != nil {
		return err
	}
	nsel := labels.Nothing()
	if nm, ok, _ := unstructured.NestedStringMap(pool.Object, "spec", "nodeSelector", "matchLabels"); ok {
		nsel = labels.SelectorFromSet(nm)
	}
	nodes, err := p.d.Resource(gvrNode).List(p.ctx, metav1.ListOptions{LabelSelector: nsel.String()})
	if err != nil {
		return err
	}
	cur := nested(pool, "status", "configuration", "name")
	if cur != rendered {
		p.updated[pool.GetName()] = time.Now()
	}
	rolled := time.Since(p.updated[pool.GetName()]) >= poolSettleTime
	n := int64(len(nodes.Items))
	upd, updating, updated := int64(0), "True", "False"
	if rolled {
		upd, updating, updated = n, "False", "True"
		for i := range nodes.Items {
			nd := &nodes.Items[i]
			if nd.GetAnnotations()[currentConfig] == rendered {
				continue
			}
			a := nd.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			a[currentConfig], a[desiredConfig] = rendered, rendered
			a["machineconfiguration.openshift.io/state"] = "Done"
			nd.SetAnnotations(a)
			if _, err := p.d.Resource(gvrNode).Update(p.ctx, nd, metav1.UpdateOptions{FieldManager: "lab-player"}); err != nil {
				return fmt.Errorf("lab player: node %s: %w", nd.GetName(), err)
			}
		}
	}
	key := fmt.Sprint(rendered, upd, n, pool.GetGeneration())
	if cur == rendered && p.written[pool.GetName()] == key {
		return nil
	}
	p.written[pool.GetName()] = key
	return p.status(gvrPool, "", pool.GetName(), map[string]any{
		"observedGeneration": pool.GetGeneration(),
		"configuration":      map[string]any{"name": rendered, "source": nonNil(sources)},
		"machineCount":       n, "updatedMachineCount": upd, "readyMachineCount": upd,
		"unavailableMachineCount": n - upd, "degradedMachineCount": int64(0),
		"conditions": []any{cond("Updated", updated, "", "All nodes are updated with "+rendered),
			cond("Updating", updating, "", ""), cond("Degraded", "False", "", ""),
			cond("NodeDegraded", "False", "", ""), cond("RenderDegraded", "False", "", "")},
	})
}

func nonNil(s []any) []any {
	if s == nil {
		return []any{}
	}
	return s
}
