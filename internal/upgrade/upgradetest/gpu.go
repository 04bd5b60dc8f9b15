package upgradetest

import (
	"context"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
)

// OSBuild is the RHCOS build the simulated nodes run at a version (418.94.<version>, in the
// shape of OSTREE_VERSION 418.94.202501221327-0).
func OSBuild(version string) string {
	return strings.ReplaceAll(minor(version), ".", "") + ".94." + strings.ReplaceAll(version, ".", "")
}

// BlacklistMC is the day-1 irdma blacklist MachineConfig of the worker pool, as the iso stage
// renders it (kernel argument and modprobe.d file).
const BlacklistMC = "99-worker-module-blacklist"

func blacklistMC() map[string]any {
	return map[string]any{"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
		"metadata": map[string]any{"name": BlacklistMC, "labels": map[string]any{"machineconfiguration.openshift.io/role": "worker"}},
		"spec": map[string]any{"kernelArguments": []any{"module_blacklist=irdma"},
			"config": map[string]any{"ignition": map[string]any{"version": "3.2.0"}, "storage": map[string]any{"files": []any{map[string]any{
				"path": "/etc/modprobe.d/bootstrap-blacklist.conf", "mode": int64(420), "overwrite": true,
				"contents": map[string]any{"source": "data:,blacklist%20irdma%0Ainstall%20irdma%20%2Fbin%2Ffalse%0A"}}}}}}}
}

// rendered writes the rendered MachineConfig a pool's spec.configuration names when it is
// missing: the kernel arguments and files of every MachineConfig its machineConfigSelector
// selects, as the MCO's render controller merges them.
func (s *Sim) rendered(ctx context.Context) error {
	mcs := s.D.Resource(clustertest.MachineConfigs)
	pl, err := s.D.Resource(clustertest.MachineConfigPools).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	ml, err := mcs.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, mc := range ml.Items {
		have[mc.GetName()] = true
	}
	for _, p := range pl.Items {
		name, _, _ := unstructured.NestedString(p.Object, "spec", "configuration", "name")
		if name == "" || have[name] {
			continue
		}
		raw, _, _ := unstructured.NestedMap(p.Object, "spec", "machineConfigSelector")
		var ls metav1.LabelSelector
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
			return err
		}
		sel, err := metav1.LabelSelectorAsSelector(&ls)
		if err != nil {
			return err
		}
		var args, files []any
		for _, mc := range ml.Items {
			if strings.HasPrefix(mc.GetName(), "rendered-") || !sel.Matches(labels.Set(mc.GetLabels())) {
				continue
			}
			a, _, _ := unstructured.NestedSlice(mc.Object, "spec", "kernelArguments")
			f, _, _ := unstructured.NestedSlice(mc.Object, "spec", "config", "storage", "files")
			args, files = append(args, a...), append(files, f...)
		}
		r := map[string]any{"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
			"metadata": map[string]any{"name": name},
			"spec": map[string]any{"kernelArguments": args, "config": map[string]any{"ignition": map[string]any{"version": "3.2.0"},
				"storage": map[string]any{"files": files}}}}
		if _, err := mcs.Create(ctx, &unstructured.Unstructured{Object: r}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// GPUNamespace is where the simulated GPU operator runs its driver pods.
const GPUNamespace = upgrade.DefaultGPUNamespace

// gpu plays the GPU operator's per-build driver DaemonSets on OpenShift: each node labelled
// nvidia.com/gpu.present gets a driver pod for the build its NFD label names (labelled
// openshift.driver-toolkit.rhcos=<build>), Ready one reconcile later unless Faults.DriverNode
// names the node; a pod for another build on the node is removed.
func (s *Sim) gpu(ctx context.Context) error {
	nl, err := s.D.Resource(clustertest.Nodes).List(ctx, metav1.ListOptions{LabelSelector: upgrade.LabelGPUPresent + "=true"})
	if err != nil {
		return err
	}
	pods := s.D.Resource(Pods).Namespace(GPUNamespace)
	for _, n := range nl.Items {
		build := n.GetLabels()[upgrade.LabelOSBuild]
		pl, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app=nvidia-driver-daemonset"})
		if err != nil {
			return err
		}
		var mine *unstructured.Unstructured
		for i := range pl.Items {
			p := &pl.Items[i]
			if on, _, _ := unstructured.NestedString(p.Object, "spec", "nodeName"); on != n.GetName() {
				continue
			}
			if p.GetLabels()[upgrade.LabelDriverBuild] != build {
				zero := int64(0)
				_ = pods.Delete(ctx, p.GetName(), metav1.DeleteOptions{GracePeriodSeconds: &zero})
				continue
			}
			mine = p
		}
		if mine == nil {
			p := obj("v1", "Pod", GPUNamespace, "nvidia-driver-daemonset-"+build+"-"+n.GetName())
			p.SetLabels(map[string]string{"app": "nvidia-driver-daemonset", upgrade.LabelDriverBuild: build})
			p.Object["spec"] = map[string]any{"nodeName": n.GetName(), "nodeSelector": map[string]any{upgrade.LabelOSBuild: build},
				"containers": []any{map[string]any{"name": "nvidia-driver-ctr", "image": "registry.site.example:8443/nvidia/driver:570.148.08-rhcos" + build}}}
			if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
			continue
		}
		ready := "True"
		if n.GetName() == s.Faults.DriverNode {
			ready = "False"
		}
		conds, _, _ := unstructured.NestedSlice(mine.Object, "status", "conditions")
		if c := getCond(conds, "Ready"); c != nil && c["status"] == ready {
			continue
		}
		conds = setCond(conds, condition("Ready", ready, "", "", s.now()))
		_ = unstructured.SetNestedSlice(mine.Object, conds, "status", "conditions")
		_ = unstructured.SetNestedField(mine.Object, "Running", "status", "phase")
		if _, err := pods.UpdateStatus(ctx, mine, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return nil
}
