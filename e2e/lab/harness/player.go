package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/bootstrap-dev/bootstrap/internal/site"
)

var (
	gvrNode    = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	gvrNS      = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	gvrDeploy  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	gvrCV      = schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "clusterversions"}
	gvrCO      = schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "clusteroperators"}
	gvrCatalog = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "catalogsources"}
	gvrSub     = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "subscriptions"}
	gvrPlan    = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "installplans"}
	gvrCSV     = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "clusterserviceversions"}
	gvrPool    = schema.GroupVersionResource{Group: "machineconfiguration.openshift.io", Version: "v1", Resource: "machineconfigpools"}
	gvrMC      = schema.GroupVersionResource{Group: "machineconfiguration.openshift.io", Version: "v1", Resource: "machineconfigs"}
	gvrApp     = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}
	gvrRoute   = schema.GroupVersionResource{Group: "route.openshift.io", Version: "v1", Resource: "routes"}
	gvrImage   = schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "images"}
	gvrHub     = schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "operatorhubs"}
	// labNamespaces are the installer's namespaces the later stages write into.
	labNamespaces = []string{"openshift-config", "openshift-config-managed", "openshift-marketplace",
		"openshift-machine-config-operator", "openshift-operators", "openshift-operator-lifecycle-manager"}
	labOperator = []string{"authentication", "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler",
		"machine-config", "network", "ingress", "console", "image-registry", "marketplace", "operator-lifecycle-manager"}
)

const (
	roleLabel      = "machineconfiguration.openshift.io/role"
	currentConfig  = "machineconfiguration.openshift.io/currentConfig"
	desiredConfig  = "machineconfiguration.openshift.io/desiredConfig"
	gitopsPackage  = "openshift-gitops-operator"
	argoNamespace  = "openshift-gitops"
	argoServer     = "openshift-gitops-server"
	poolSettleTime = time.Second
)

// player is the state of one play of the cluster.
type player struct {
	c       *Cluster
	d       dynamic.Interface
	ctx     context.Context
	updated map[string]time.Time // pool -> when its rendered config last changed
	written map[string]string    // pool -> the status last written
}

// play waits for every node to boot the ISO, then starts the API server and plays the install and
// the controllers until ctx ends.
func (c *Cluster) play(ctx context.Context) error {
	t := time.NewTicker(c.Poll)
	defer t.Stop()
	for _, n := range c.nodes {
		c.api.SetHost(n.Name, n.Role, "disconnected", "Waiting for the host to boot the agent ISO")
	}
	for {
		n, all := c.booted()
		for i, nd := range c.nodes {
			if i < n {
				c.api.SetHost(nd.Name, nd.Role, "known", "Host is ready to be installed")
			}
		}
		if all {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	c.api.SetCluster("preparing-for-installation", "Preparing cluster for installation")
	d, err := c.startAPI()
	if err != nil {
		return err
	}
	p := &player{c: c, d: d, ctx: ctx, updated: map[string]time.Time{}, written: map[string]string{}}
	if err := p.install(); err != nil {
		return err
	}
	for {
		if err := p.reconcile(); err != nil && ctx.Err() == nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func now() string { return time.Now().UTC().Format(time.RFC3339) }

func cond(typ, status, reason, msg string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg, "lastTransitionTime": now()}
}

// install plays bootstrap then the rest of the install: nodes join and become Ready, the
// ClusterVersion and ClusterOperators become Available, the pools render their configs.
func (p *player) install() error {
	for _, n := range p.c.nodes {
		p.c.api.SetHost(n.Name, n.Role, "installing-in-progress", "Writing image to disk")
		p.c.api.SetHostStage(n.Name, "Writing image to disk") // progress.current_stage, as the assisted service reports it
	}
	p.c.api.SetCluster("installing", "Installation in progress")
	for _, ns := range labNamespaces {
		if _, err := p.create(gvrNS, "", map[string]any{"metadata": map[string]any{"name": ns}}); err != nil {
			return err
		}
	}
	for _, o := range []struct {
		gvr  schema.GroupVersionResource
		kind string
	}{{gvrImage, "Image"}, {gvrHub, "OperatorHub"}} {
		if _, err := p.create(o.gvr, "", map[string]any{"metadata": map[string]any{"name": "cluster"}, "spec": map[string]any{}}); err != nil {
			return err
		}
	}
	if _, err := p.create(gvrCV, "", map[string]any{"metadata": map[string]any{"name": "version"},
		"spec": map[string]any{"clusterID": "5a1c0f3e-7b2d-4c1e-9f00-1ab0c0ffee00", "channel": "stable-4.18"}}); err != nil {
		return err
	}
	if err := p.status(gvrCV, "", "version", p.clusterVersion(false)); err != nil {
		return err
	}
	for _, role := range []string{site.RoleMaster, site.RoleWorker} {
		if err := p.pool(role); err != nil {
			return err
		}
	}
	for _, n := range p.c.nodes {
		if err := p.node(n, false); err != nil {
			return err
		}
	}
	for _, name := range labOperator {
		if _, err := p.create(gvrCO, "", map[string]any{"metadata": map[string]any{"name": name}, "spec": map[string]any{}}); err != nil {
			return err
		}
		if err := p.status(gvrCO, "", name, operatorStatus(false)); err != nil {
			return err
		}
	}
	if err := p.c.mark("bootstrap-complete", "Cluster is bootstrapped (lab player)"); err != nil {
		return err
	}
	p.c.api.SetCluster("finalizing", "Finalizing cluster installation")
	for _, n := range p.c.nodes {
		if err := p.node(n, true); err != nil {
			return err
		}
		p.c.api.SetHost(n.Name, n.Role, "installed", "Done")
		p.c.api.SetHostStage(n.Name, "Done")
	}
	for _, name := range labOperator {
		if err := p.status(gvrCO, "", name, operatorStatus(true)); err != nil {
			return err
		}
	}
	if err := p.status(gvrCV, "", "version", p.clusterVersion(true)); err != nil {
		return err
	}
	if err := p.reconcile(); err != nil {
		return err
	}
	p.c.api.SetCluster("installed", "Cluster is installed")
	return p.c.mark("install-complete", "Cluster is installed (lab player): "+ReleaseVersion)
}

func (p *player) clusterVersion(done bool) map[string]any {
	image := "quay.io/openshift-release-dev/ocp-release:" + ReleaseVersion + "-x86_64"
	state, avail, prog := "Partial", "False", "True"
	var completed any
	if done {
		state, avail, prog, completed = "Completed", "True", "False", now()
	}
	return map[string]any{
		"desired":            map[string]any{"version": ReleaseVersion, "image": image},
		"history":            []any{map[string]any{"state": state, "version": ReleaseVersion, "image": image, "startedTime": now(), "completionTime": completed, "verified": false}},
		"observedGeneration": int64(1), "versionHash": "lab-" + ReleaseVersion, "availableUpdates": nil,
		"conditions": []any{
			cond("Available", avail, "", "Done applying "+ReleaseVersion),
			cond("Progressing", prog, "", "Cluster version is "+ReleaseVersion),
			cond("Failing", "False", "", ""),
		},
	}
}

func operatorStatus(avail bool) map[string]any {
	a, pr := "False", "True"
	if avail {
		a, pr = "True", "False"
	}
	return map[string]any{
		"conditions": []any{cond("Available", a, "AsExpected", ""), cond("Progressing", pr, "AsExpected", ""),
			cond("Degraded", "False", "AsExpected", "")},
		"versions": []any{map[string]any{"name": "operator", "version": ReleaseVersion}},
	}
}

// node creates or updates a Node: labels of its role, its address, Ready when ready.
func (p *player) node(n site.Node, ready bool) error {
	labels := map[string]any{"kubernetes.io/hostname": n.Name, "kubernetes.io/os": "linux",
		"node-role.kubernetes.io/" + n.Role: ""}
	if n.Role == site.RoleMaster {
		labels["node-role.kubernetes.io/control-plane"] = ""
	}
	if _, err := p.create(gvrNode, "", map[string]any{"metadata": map[string]any{"name": n.Name, "labels": labels}}); err != nil {
		return err
	}
	st, reason := "False", "KubeletNotReady"
	if ready {
		st, reason = "True", "KubeletReady"
	}
	addrs := []any{map[string]any{"type": "Hostname", "address": n.Name}}
	if ip := nodeIP(n); ip != "" {
		addrs = append([]any{map[string]any{"type": "InternalIP", "address": ip}}, addrs...)
	}
	return p.status(gvrNode, "", n.Name, map[string]any{
		"conditions": []any{map[string]any{"type": "Ready", "status": st, "reason": reason, "message": "lab player",
			"lastHeartbeatTime": now(), "lastTransitionTime": now()}},
		"addresses": addrs,
		"nodeInfo": map[string]any{"kubeletVersion": "v1.31.1", "osImage": "Red Hat Enterprise Linux CoreOS 418 (lab)",
			"architecture": "amd64", "operatingSystem": "linux", "machineID": "", "systemUUID": "", "bootID": "",
			"kernelVersion": "5.14.0", "containerRuntimeVersion": "cri-o://1.31", "kubeProxyVersion": ""},
	})
}

// nodeIP is the node's first static address in its nmstate config.
func nodeIP(n site.Node) string {
	ifs, _ := n.NetworkConfig["interfaces"].([]any)
	for _, i := range ifs {
		m, _ := i.(map[string]any)
		f, _ := m["ipv4"].(map[string]any)
		addrs, _ := f["address"].([]any)
		for _, a := range addrs {
			if am, _ := a.(map[string]any); am != nil {
				if ip, _ := am["ip"].(string); ip != "" {
					return ip
				}
			}
		}
	}
	return ""
}

// pool creates the role's MachineConfigPool and its base MachineConfig, as the installer does.
func (p *player) pool(role string) error {
	if _, err := p.create(gvrMC, "", map[string]any{
		"metadata": map[string]any{"name": "00-" + role, "labels": map[string]any{roleLabel: role}},
		"spec":     map[string]any{"config": map[string]any{"ignition": map[string]any{"version": "3.4.0"}}},
	}); err != nil {
		return err
	}
	_, err := p.create(gvrPool, "", map[string]any{
		"metadata": map[string]any{"name": role},
		"spec": map[string]any{
			"machineConfigSelector": map[string]any{"matchLabels": map[string]any{roleLabel: role}},
			"nodeSelector":          map[string]any{"matchLabels": map[string]any{"node-role.kubernetes.io/" + role: ""}},
		},
	})
	return err
}

// create creates obj unless it exists.
func (p *player) create(gvr schema.GroupVersionResource, ns string, obj map[string]any) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion(gvr.GroupVersion().String())
	u.SetKind(kindOf(gvr))
	out, err := p.d.Resource(gvr).Namespace(ns).Create(p.ctx, u, metav1.CreateOptions{FieldManager: "lab-player"})
	if apierrors.IsAlreadyExists(err) {
		return p.d.Resource(gvr).Namespace(ns).Get(p.ctx, u.GetName(), metav1.GetOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("lab player: create %s %s: %w", gvr.Resource, u.GetName(), err)
	}
	return out, nil
}

// status writes an object's status (the status subresource where there is one, else the object).
func (p *player) status(gvr schema.GroupVersionResource, ns, name string, st map[string]any) error {
	r := p.d.Resource(gvr).Namespace(ns)
	for i := 0; ; i++ {
		u, err := r.Get(p.ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("lab player: %s %s: %w", gvr.Resource, name, err)
		}
		u.Object["status"] = st
		if gvr == gvrApp {
			_, err = r.Update(p.ctx, u, metav1.UpdateOptions{FieldManager: "lab-player"})
		} else {
			_, err = r.UpdateStatus(p.ctx, u, metav1.UpdateOptions{FieldManager: "lab-player"})
		}
		if err == nil {
			return nil
		}
		if !apierrors.IsConflict(err) || i > 10 {
			return fmt.Errorf("lab player: status of %s %s: %w", gvr.Resource, name, err)
		}
	}
}

func kindOf(gvr schema.GroupVersionResource) string {
	return map[string]string{"nodes": "Node", "namespaces": "Namespace", "deployments": "Deployment",
		"clusterversions": "ClusterVersion", "clusteroperators": "ClusterOperator", "catalogsources": "CatalogSource",
		"subscriptions": "Subscription", "installplans": "InstallPlan", "clusterserviceversions": "ClusterServiceVersion",
		"machineconfigpools": "MachineConfigPool", "machineconfigs": "MachineConfig", "applications": "Application",
		"routes": "Route", "images": "Image", "operatorhubs": "OperatorHub"}[gvr.Resource]
}

func nested(u *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return s
}

// shortHash is the first 10 hex digits of the SHA-256 of the parts.
func shortHash(parts ...string) string {
	sort.Strings(parts)
	h := sha256.New()
	for _, s := range parts {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:10]
}
