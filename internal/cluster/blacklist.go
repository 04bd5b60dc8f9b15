package cluster

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// ModuleProber asks a node itself whether a kernel module is loaded (lsmod over SSH).
type ModuleProber interface {
	ModuleLoaded(ctx context.Context, node, address, module string) (bool, error)
}

// NodeModule is the verdict for one module on one node.
type NodeModule struct {
	Node   string `json:"node"`
	Pool   string `json:"pool"`
	Module string `json:"module"`
	// Config is the rendered MachineConfig the node runs (its currentConfig annotation).
	Config   string `json:"config"`
	InConfig bool   `json:"inConfig"`
	// Loaded is nil when no prober was given.
	Loaded *bool `json:"loaded,omitempty"`
}

// BlacklistError lists the nodes where a blacklisted module is not blacklisted or still loaded.
type BlacklistError struct{ Problems []string }

func (e *BlacklistError) Error() string {
	return "module blacklist not in effect: " + strings.Join(e.Problems, "; ")
}

const currentConfigAnnotation = "machineconfiguration.openshift.io/currentConfig"

// VerifyBlacklists checks, for each node of each pool named, that the rendered MachineConfig the
// node runs carries the blacklist (API) and, with a prober, that the module is not loaded (node).
func (c *Client) VerifyBlacklists(ctx context.Context, bls []Blacklist, prober ModuleProber, progress Progress) ([]NodeModule, error) {
	var out []NodeModule
	var problems []string
	for _, bl := range bls {
		for _, pool := range bl.Pools {
			p, err := c.Get(ctx, Ref{APIVersion: MachineConfigV1, Kind: "MachineConfigPool", Name: pool})
			if err != nil {
				return out, fmt.Errorf("blacklist: pool %s: %w", pool, err)
			}
			nodes, err := c.poolNodes(ctx, p)
			if err != nil {
				return out, err
			}
			for _, n := range nodes {
				cfg := n.GetAnnotations()[currentConfigAnnotation]
				if cfg == "" {
					cfg = readPool(p).RenderedConfig
				}
				mc, err := c.Get(ctx, Ref{APIVersion: MachineConfigV1, Kind: "MachineConfig", Name: cfg})
				if err != nil {
					return out, fmt.Errorf("blacklist: node %s: rendered config %q: %w", n.GetName(), cfg, err)
				}
				addr := nodeAddress(&n)
				for _, mod := range bl.Modules {
					v := NodeModule{Node: n.GetName(), Pool: pool, Module: mod, Config: cfg, InConfig: Blacklists(mc, mod)}
					if !v.InConfig {
						problems = append(problems, fmt.Sprintf("node %s: %s does not blacklist %s", v.Node, cfg, mod))
					}
					if prober != nil {
						loaded, err := prober.ModuleLoaded(ctx, n.GetName(), addr, mod)
						if err != nil {
							return out, fmt.Errorf("blacklist: node %s (%s): %w", n.GetName(), addr, err)
						}
						v.Loaded = &loaded
						if loaded {
							problems = append(problems, fmt.Sprintf("node %s: %s is loaded", v.Node, mod))
						}
					}
					progress.say("node %s: %s blacklisted in %s: %t%s", v.Node, mod, cfg, v.InConfig, loadedNote(v.Loaded))
					out = append(out, v)
				}
			}
		}
	}
	if len(problems) > 0 {
		return out, &BlacklistError{Problems: problems}
	}
	return out, nil
}

func loadedNote(l *bool) string {
	switch {
	case l == nil:
		return " (not checked on the node)"
	case *l:
		return ", loaded"
	default:
		return ", not loaded"
	}
}

func (c *Client) poolNodes(ctx context.Context, pool *unstructured.Unstructured) ([]unstructured.Unstructured, error) {
	sel, err := selectorAt(pool, "spec", "nodeSelector")
	if err != nil {
		return nil, fmt.Errorf("pool %s: nodeSelector: %w", pool.GetName(), err)
	}
	return c.List(ctx, "v1", "Node", "", sel.String())
}

// poolSelects reports whether the pool's machineConfigSelector selects mc.
func poolSelects(pool, mc *unstructured.Unstructured) (bool, error) {
	if mc == nil {
		return false, nil
	}
	sel, err := selectorAt(pool, "spec", "machineConfigSelector")
	if err != nil {
		return false, fmt.Errorf("pool %s: machineConfigSelector: %w", pool.GetName(), err)
	}
	return !sel.Empty() && sel.Matches(labels.Set(mc.GetLabels())), nil
}

func selectorAt(u *unstructured.Unstructured, path ...string) (labels.Selector, error) {
	m, ok, _ := unstructured.NestedMap(u.Object, path...)
	if !ok {
		return labels.Nothing(), nil
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &ls); err != nil {
		return nil, err
	}
	return metav1.LabelSelectorAsSelector(&ls)
}

func nodeAddress(n *unstructured.Unstructured) string {
	addrs, _, _ := unstructured.NestedSlice(n.Object, "status", "addresses")
	var host string
	for _, a := range addrs {
		m, _ := a.(map[string]any)
		switch m["type"] {
		case "InternalIP":
			if s, _ := m["address"].(string); s != "" {
				return s
			}
		case "Hostname":
			host, _ = m["address"].(string)
		}
	}
	if host != "" {
		return host
	}
	return n.GetName()
}

// Blacklists reports whether a MachineConfig keeps module from loading: through a kernel argument
// (module_blacklist= or modprobe.blacklist=) or a file whose content blacklists it
// ("blacklist irdma" or "install irdma /bin/false", as /etc/modprobe.d files do).
func Blacklists(mc *unstructured.Unstructured, module string) bool {
	args, _, _ := unstructured.NestedStringSlice(mc.Object, "spec", "kernelArguments")
	for _, a := range args {
		for _, p := range []string{"module_blacklist=", "modprobe.blacklist="} {
			if v, ok := strings.CutPrefix(a, p); ok {
				for _, m := range strings.Split(v, ",") {
					if m == module {
						return true
					}
				}
			}
		}
	}
	files, _, _ := unstructured.NestedSlice(mc.Object, "spec", "config", "storage", "files")
	re := regexp.MustCompile(`(?m)^\s*(blacklist\s+` + regexp.QuoteMeta(module) + `\s*$|install\s+` + regexp.QuoteMeta(module) + `\s+/(usr/)?bin/(false|true))`)
	for _, f := range files {
		m, _ := f.(map[string]any)
		src, _, _ := unstructured.NestedString(m, "contents", "source")
		if data, err := decodeDataURL(src); err == nil && re.Match(data) {
			return true
		}
	}
	return false
}

// decodeDataURL decodes the RFC 2397 data URLs Ignition uses for file contents.
func decodeDataURL(s string) ([]byte, error) {
	rest, ok := strings.CutPrefix(s, "data:")
	if !ok {
		return nil, fmt.Errorf("not a data URL")
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok {
		return nil, fmt.Errorf("data URL without a comma")
	}
	if strings.HasSuffix(meta, ";base64") {
		return base64.StdEncoding.DecodeString(data)
	}
	u, err := url.PathUnescape(data)
	return []byte(u), err
}
