package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// mapper maps a group/version/kind to its resource from the API server's own discovery, one
// group/version at a time (GET /api/v1 or /apis/GROUP/VERSION), cached. A kind missing from the
// cached list fetches that list again once, so a CRD installed a moment ago is seen.
//
// client-go's discovery RESTMapper does the same lookup, but its discovery client links client-go's
// scheme of every built-in API group (k8s.io/api: about 8 MB, a third of the binary's code) although
// bootstrap decodes nothing into those Go types: every object here is unstructured.
type mapper struct {
	rc rest.Interface

	mu    sync.Mutex
	lists map[schema.GroupVersion]map[string]mapping // kind → mapping, per served group/version
}

// mapping is where a kind lives.
type mapping struct {
	resource   schema.GroupVersionResource
	namespaced bool
}

func newMapper(rc rest.Interface) *mapper {
	return &mapper{rc: rc, lists: map[schema.GroupVersion]map[string]mapping{}}
}

// mapping returns where gvk is served. A group/version or kind the server does not serve is a
// *meta.NoKindMatchError (meta.IsNoMatchError reports it).
func (m *mapper) mapping(ctx context.Context, gvk schema.GroupVersionKind) (mapping, error) {
	gv := gvk.GroupVersion()
	m.mu.Lock()
	mp, ok := m.lists[gv][gvk.Kind]
	m.mu.Unlock()
	if ok {
		return mp, nil
	}
	kinds, err := m.fetch(ctx, gv)
	if err != nil {
		return mapping{}, err
	}
	if mp, ok := kinds[gvk.Kind]; ok {
		return mp, nil
	}
	return mapping{}, &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
}

// fetch reads gv's resource list from the server and caches it; a group/version the server does not
// serve (404) has no kinds and is not cached.
func (m *mapper) fetch(ctx context.Context, gv schema.GroupVersion) (map[string]mapping, error) {
	path := "/apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		path = "/api/" + gv.Version
	}
	raw, err := m.rc.Get().AbsPath(path).Do(ctx).Raw()
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discovery %s: %w", path, err)
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("discovery %s: %w", path, err)
	}
	kinds := make(map[string]mapping, len(list.APIResources))
	for _, r := range list.APIResources {
		if strings.Contains(r.Name, "/") { // a subresource (deployments/status) shares its parent's kind
			continue
		}
		kinds[r.Kind] = mapping{resource: gv.WithResource(r.Name), namespaced: r.Namespaced}
	}
	m.mu.Lock()
	m.lists[gv] = kinds
	m.mu.Unlock()
	return kinds, nil
}
