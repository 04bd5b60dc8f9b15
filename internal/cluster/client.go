package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// FieldManager is the server-side apply field manager of everything bootstrap writes.
const FieldManager = "bootstrap"

// Client talks to one cluster through the dynamic client. It is safe for concurrent use.
type Client struct {
	dyn    dynamic.Interface
	raw    rest.Interface // the unversioned REST client, for subresources the dynamic client lacks (pod logs)
	mapper *mapper
	// interval is how often waits poll.
	interval time.Duration
	// changed is told each object applied and each patch, as it is made.
	changed func(Applied)
}

// WithChangeHook has fn told every change the client makes, as it makes it: each object Apply
// applies (created, configured or unchanged) and each Patch (an InstallPlan approved). A caller
// journals them there, so what a killed attempt did is on record. fn must not block for long.
func WithChangeHook(fn func(Applied)) Option {
	return func(c *Client) error {
		c.changed = fn
		return nil
	}
}

// Option configures a Client.
type Option func(*Client) error

// WithPollInterval sets how often waits read the object again (default 2 s).
func WithPollInterval(d time.Duration) Option {
	return func(c *Client) error {
		if d <= 0 {
			return fmt.Errorf("poll interval must be positive, got %s", d)
		}
		c.interval = d
		return nil
	}
}

// New returns a Client for the cluster cfg points at.
func New(cfg *rest.Config, opts ...Option) (*Client, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 20, 40
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster client: %w", err)
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("cluster client: %w", err)
	}
	// Discovery documents are read as JSON into metav1 types: an empty scheme is enough.
	dcfg := rest.CopyConfig(cfg)
	dcfg.NegotiatedSerializer = serializer.NewCodecFactory(runtime.NewScheme()).WithoutConversion()
	rc, err := rest.UnversionedRESTClientForConfigAndClient(dcfg, hc)
	if err != nil {
		return nil, fmt.Errorf("cluster discovery client: %w", err)
	}
	c := &Client{dyn: dyn, raw: rc, mapper: newMapper(rc), interval: 2 * time.Second}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// NewFromKubeconfig returns a Client for the current context of the kubeconfig file at path.
func NewFromKubeconfig(path string, opts ...Option) (*Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return New(cfg, opts...)
}

// Ref names one object.
type Ref struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// String is "Kind/name" or "Kind namespace/name".
func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Kind + "/" + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// RefOf returns the Ref of an object.
func RefOf(u *unstructured.Unstructured) Ref {
	return Ref{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

// lookup maps apiVersion/kind to its resource through the server's discovery (refreshed once on a
// miss: a CRD installed a moment ago is not in the cache yet).
func (c *Client) lookup(ctx context.Context, apiVersion, kind string) (mapping, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return mapping{}, fmt.Errorf("apiVersion %q: %w", apiVersion, err)
	}
	m, err := c.mapper.mapping(ctx, gv.WithKind(kind))
	if err != nil {
		return mapping{}, fmt.Errorf("%s %s is not served by this cluster: %w", apiVersion, kind, err)
	}
	return m, nil
}

// resource is the dynamic client of apiVersion/kind in namespace (which a namespaced kind needs).
func (c *Client) resource(ctx context.Context, apiVersion, kind, namespace string) (dynamic.ResourceInterface, error) {
	m, err := c.lookup(ctx, apiVersion, kind)
	if err != nil {
		return nil, err
	}
	if m.namespaced {
		if namespace == "" {
			return nil, fmt.Errorf("%s %s is namespaced: set metadata.namespace", apiVersion, kind)
		}
		return c.dyn.Resource(m.resource).Namespace(namespace), nil
	}
	return c.dyn.Resource(m.resource), nil
}

// Served says whether the cluster serves apiVersion/kind now (discovery is refreshed once on a
// miss, so a CRD an operator installed a moment ago is seen).
func (c *Client) Served(apiVersion, kind string) (bool, error) {
	_, err := c.lookup(context.Background(), apiVersion, kind)
	switch {
	case err == nil:
		return true, nil
	case meta.IsNoMatchError(err):
		return false, nil
	}
	return false, err
}

// Get reads one object.
func (c *Client) Get(ctx context.Context, r Ref) (*unstructured.Unstructured, error) {
	ri, err := c.resource(ctx, r.APIVersion, r.Kind, r.Namespace)
	if err != nil {
		return nil, err
	}
	return ri.Get(ctx, r.Name, metav1.GetOptions{})
}

// List reads every object of a kind (in namespace, or cluster-wide when empty), optionally filtered
// by a label selector.
func (c *Client) List(ctx context.Context, apiVersion, kind, namespace, selector string) ([]unstructured.Unstructured, error) {
	m, err := c.lookup(ctx, apiVersion, kind)
	if err != nil {
		return nil, err
	}
	var ri dynamic.ResourceInterface = c.dyn.Resource(m.resource)
	if namespace != "" && m.namespaced {
		ri = c.dyn.Resource(m.resource).Namespace(namespace)
	}
	l, err := ri.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", kind, err)
	}
	return l.Items, nil
}

// Patch sends a merge patch (used for the few writes that are not ours to own, like approving an
// InstallPlan).
func (c *Client) Patch(ctx context.Context, r Ref, mergePatch []byte) (*unstructured.Unstructured, error) {
	ri, err := c.resource(ctx, r.APIVersion, r.Kind, r.Namespace)
	if err != nil {
		return nil, err
	}
	out, err := ri.Patch(ctx, r.Name, types.MergePatchType, mergePatch, metav1.PatchOptions{FieldManager: FieldManager})
	if err == nil && c.changed != nil {
		sum := sha256.Sum256(mergePatch)
		c.changed(Applied{Ref: r, Action: Patched, SHA256: hex.EncodeToString(sum[:])})
	}
	return out, err
}
