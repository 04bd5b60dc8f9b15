package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
)

// ConfigureOptions is what the configure stage applies and waits for.
type ConfigureOptions struct {
	// WorkDir holds the files the mirror and iso stages wrote: idms-oc-mirror.yaml,
	// itms-oc-mirror.yaml, cs-*.yaml (oc-mirror v2's names, mirror.IDMSFile and its neighbours)
	// and openshift/*.yaml. Missing files are skipped.
	WorkDir string
	// RegistryHost ("host:port") keys the CA in the image config's trusted-CA ConfigMap.
	RegistryHost string
	// CAFiles are PEM files trusted for RegistryHost (the registry CA and the site trust bundles).
	CAFiles []string
	// DisableDefaultSources turns the default OperatorHub sources off.
	DisableDefaultSources bool
	// Blacklists are the kernel modules that must not load, by pool.
	Blacklists []Blacklist
	// Prober checks on the nodes themselves that a module is not loaded; nil skips that check
	// (the result says so).
	Prober ModuleProber
	// Timeout bounds each wait (catalog source, pool); default 30 minutes.
	Timeout time.Duration
	// SkipWait applies only (for tests of apply and for plan-like use).
	SkipWait bool
}

// Blacklist is a set of kernel modules kept from loading on the nodes of some pools.
type Blacklist struct {
	Modules []string `json:"modules"`
	Pools   []string `json:"pools"`
}

// ConfigureResult is what configure did and saw.
type ConfigureResult struct {
	Applied        []Applied    `json:"applied"`
	Changed        int          `json:"changed"`
	CatalogSources []string     `json:"catalogSources,omitempty"`
	Pools          []PoolStatus `json:"pools,omitempty"`
	Blacklist      []NodeModule `json:"blacklist,omitempty"`
}

// Names of the objects configure generates.
const (
	TrustedCAConfigMap = "bootstrap-registry-ca"
	openshiftConfigNS  = "openshift-config"
)

// ManifestFiles lists, in apply order, the files configure applies from the work dir.
func ManifestFiles(workDir string) ([]string, error) {
	var files []string
	for _, p := range []string{"idms-oc-mirror.yaml", "itms-oc-mirror.yaml", "cs-*.yaml", "openshift/*.yaml", "openshift/*.yml"} {
		m, err := Glob(filepath.Join(workDir, p))
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	return files, nil
}

// Objects returns every object configure applies with the file each came from ("generated" for
// the OperatorHub and CA trust objects built from the options). Namespaces and ConfigMaps go first.
func Objects(o ConfigureOptions) ([]*unstructured.Unstructured, []string, error) {
	files, err := ManifestFiles(o.WorkDir)
	if err != nil {
		return nil, nil, err
	}
	var objs []*unstructured.Unstructured
	var srcs []string
	for _, f := range files {
		got, err := ReadFiles(f)
		if err != nil {
			return nil, nil, err
		}
		rel, _ := filepath.Rel(o.WorkDir, f)
		for _, u := range got {
			objs = append(objs, u)
			srcs = append(srcs, rel)
		}
	}
	gen, err := generated(o)
	if err != nil {
		return nil, nil, err
	}
	for _, u := range gen {
		objs = append(objs, u)
		srcs = append(srcs, "generated")
	}
	objs, srcs, err = dedupe(objs, srcs)
	if err != nil {
		return nil, nil, err
	}
	idx := make([]int, len(objs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return kindRank(objs[idx[a]].GetKind()) < kindRank(objs[idx[b]].GetKind()) })
	so, ss := make([]*unstructured.Unstructured, len(objs)), make([]string, len(objs))
	for i, j := range idx {
		so[i], ss[i] = objs[j], srcs[j]
	}
	return so, ss, nil
}

func kindRank(kind string) int {
	switch kind {
	case "Namespace":
		return 0
	case "ConfigMap", "Secret":
		return 1
	default:
		return 2
	}
}

// generated builds the OperatorHub and CA-trust objects.
func generated(o ConfigureOptions) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	if o.DisableDefaultSources {
		out = append(out, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": ConfigV1, "kind": "OperatorHub",
			"metadata": map[string]any{"name": "cluster"},
			"spec":     map[string]any{"disableAllDefaultSources": true},
		}})
	}
	if len(o.CAFiles) > 0 {
		if o.RegistryHost == "" {
			return nil, fmt.Errorf("CA trust: registry host is empty; set registry.host in the site profile")
		}
		var pem strings.Builder
		for _, f := range o.CAFiles {
			b, err := fsroot.ReadFile(f, fsroot.PEM)
			if err != nil {
				return nil, fmt.Errorf("CA trust: %w", err)
			}
			if !strings.Contains(string(b), "-----BEGIN CERTIFICATE-----") {
				return nil, fmt.Errorf("CA trust: %s holds no PEM certificate", f)
			}
			pem.WriteString(strings.TrimSpace(string(b)) + "\n")
		}
		// image.config.openshift.io keys additionalTrustedCA entries by host, with ".." for ":".
		key := strings.ReplaceAll(o.RegistryHost, ":", "..")
		out = append(out,
			&unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": TrustedCAConfigMap, "namespace": openshiftConfigNS},
				"data":     map[string]any{key: pem.String()},
			}},
			&unstructured.Unstructured{Object: map[string]any{
				"apiVersion": ConfigV1, "kind": "Image",
				"metadata": map[string]any{"name": "cluster"},
				"spec":     map[string]any{"additionalTrustedCA": map[string]any{"name": TrustedCAConfigMap}},
			}})
	}
	return out, nil
}

// Configure applies the day-1 objects, then waits for every CatalogSource it applied to be READY,
// every MachineConfigPool to be Updated (and not Degraded), and verifies the module blacklists.
// A second call with the same inputs applies nothing new: result.Changed is 0.
func (c *Client) Configure(ctx context.Context, o ConfigureOptions, progress Progress) (ConfigureResult, error) {
	var res ConfigureResult
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Minute
	}
	objs, srcs, err := Objects(o)
	if err != nil {
		return res, err
	}
	ar, err := c.Apply(ctx, objs, srcs, progress)
	res.Applied, res.Changed = ar.Objects, ar.Changed()
	if err != nil || o.SkipWait {
		return res, err
	}
	var changedMC []string
	for _, a := range ar.Objects {
		if a.Kind == "CatalogSource" {
			if err := c.Wait(ctx, a.Ref, "READY", o.Timeout, CatalogSourceReady, progress); err != nil {
				return res, err
			}
			res.CatalogSources = append(res.CatalogSources, a.Namespace+"/"+a.Name)
		}
		if a.Kind == "MachineConfig" && a.Action != Unchanged {
			changedMC = append(changedMC, a.Name)
		}
	}
	pools, err := c.List(ctx, MachineConfigV1, "MachineConfigPool", "", "")
	if err != nil {
		return res, err
	}
	mcs := map[string]*unstructured.Unstructured{}
	for _, u := range objs {
		if u.GetKind() == "MachineConfig" {
			mcs[u.GetName()] = u
		}
	}
	for i := range pools {
		p := &pools[i]
		var want []string
		for _, n := range changedMC {
			if ok, err := poolSelects(p, mcs[n]); err != nil {
				return res, err
			} else if ok {
				want = append(want, n)
			}
		}
		ref := RefOf(p)
		if err := c.Wait(ctx, ref, "Updated", o.Timeout, PoolUpdated(want...), progress); err != nil {
			return res, err
		}
		u, err := c.Get(ctx, ref)
		if err != nil {
			return res, fmt.Errorf("read %s: %w", ref, err)
		}
		res.Pools = append(res.Pools, readPool(u))
	}
	res.Blacklist, err = c.VerifyBlacklists(ctx, o.Blacklists, o.Prober, progress)
	return res, err
}

// dedupe keeps the first of objects that appear twice (the iso stage copies the mirror's
// CatalogSources and ImageTagMirrorSet into openshift/ for install time); copies that differ
// are an error, since applying both would flip the object on every run.
func dedupe(objs []*unstructured.Unstructured, srcs []string) ([]*unstructured.Unstructured, []string, error) {
	seen := map[Ref]int{}
	var outO []*unstructured.Unstructured
	var outS []string
	for i, u := range objs {
		r := RefOf(u)
		if j, ok := seen[r]; ok {
			if !equality.Semantic.DeepEqual(outO[j].Object, u.Object) {
				return nil, nil, fmt.Errorf("%s is in %s and %s with different content: run the iso stage again (bootstrap replay iso) so they agree", r, outS[j], srcs[i])
			}
			continue
		}
		seen[r] = len(outO)
		outO, outS = append(outO, u), append(outS, srcs[i])
	}
	return outO, outS, nil
}
