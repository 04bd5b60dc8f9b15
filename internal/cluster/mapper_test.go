package cluster

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// TestMapperFollowsDiscovery serves discovery documents shaped like kube-apiserver's and checks the
// mapping, the namespaced scope, subresources left out, a miss refetching once (a CRD installed a
// moment ago) and a group/version the server does not serve reported as no match.
func TestMapperFollowsDiscovery(t *testing.T) {
	var argoServed atomic.Bool
	var argoFetches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1":
			_, _ = w.Write([]byte(`{"kind":"APIResourceList","groupVersion":"v1","resources":[
				{"name":"namespaces","singularName":"namespace","namespaced":false,"kind":"Namespace","verbs":["get"]},
				{"name":"namespaces/status","singularName":"","namespaced":false,"kind":"Namespace","verbs":["get"]},
				{"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap","verbs":["get"]}]}`))
		case "/apis/argoproj.io/v1beta1":
			argoFetches.Add(1)
			if !argoServed.Load() {
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
				return
			}
			_, _ = w.Write([]byte(`{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"argoproj.io/v1beta1","resources":[
				{"name":"argocds","singularName":"argocd","namespaced":true,"kind":"ArgoCD","verbs":["get"]}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, err := New(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	m, err := c.lookup(ctx, "v1", "Namespace")
	if err != nil || m.resource != (schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}) || m.namespaced {
		t.Fatalf("Namespace: %+v, %v", m, err)
	}
	if m, err := c.lookup(ctx, "v1", "ConfigMap"); err != nil || m.resource.Resource != "configmaps" || !m.namespaced {
		t.Fatalf("ConfigMap: %+v, %v", m, err)
	}
	if _, err := c.resource(ctx, "v1", "ConfigMap", ""); err == nil {
		t.Fatal("a namespaced kind without a namespace was accepted")
	}
	if _, err := c.lookup(ctx, "v1", "Secret"); !meta.IsNoMatchError(err) {
		t.Fatalf("a kind the list lacks: %v, want a no-match error", err)
	}

	if ok, err := c.Served("argoproj.io/v1beta1", "ArgoCD"); ok || err != nil {
		t.Fatalf("Served before the CRD: %v, %v", ok, err)
	}
	argoServed.Store(true)
	if ok, err := c.Served("argoproj.io/v1beta1", "ArgoCD"); !ok || err != nil {
		t.Fatalf("Served after the CRD: %v, %v", ok, err)
	}
	before := argoFetches.Load()
	if _, err := c.lookup(ctx, "argoproj.io/v1beta1", "ArgoCD"); err != nil {
		t.Fatal(err)
	}
	if got := argoFetches.Load(); got != before {
		t.Fatalf("a cached kind fetched discovery again (%d → %d)", before, got)
	}
	if _, err := c.lookup(ctx, "argoproj.io/v1beta1", "Application"); !meta.IsNoMatchError(err) {
		t.Fatalf("Application: %v, want a no-match error", err)
	}
	if got := argoFetches.Load(); got != before+1 {
		t.Fatalf("a miss fetched discovery %d times, want once", got-before)
	}

	srv.Close()
	_, err = c.lookup(ctx, "apps/v1", "Deployment")
	if err == nil || meta.IsNoMatchError(err) || errors.Is(err, context.Canceled) {
		t.Fatalf("an unreachable server: %v, want a discovery error that is not a no-match", err)
	}
}
