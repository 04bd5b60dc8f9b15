package cluster_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
)

var server clustertest.Server

func TestMain(m *testing.M) {
	code := m.Run()
	server.Stop()
	os.Exit(code)
}

func newClient(t *testing.T) (*cluster.Client, dynamic.Interface) {
	t.Helper()
	cfg := server.Config(t)
	c, err := cluster.New(cfg, cluster.WithPollInterval(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return c, clustertest.Dynamic(t, cfg)
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestApplyIsIdempotent(t *testing.T) {
	c, _ := newClient(t)
	objs, err := cluster.Decode("test.yaml", []byte(`
apiVersion: v1
kind: Namespace
metadata: {name: apply-test}
---
# a comment-only document is skipped
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: apply-test}
data: {a: "1"}
`))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := c.Apply(ctx, objs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(first); got != "created,created" {
		t.Fatalf("first apply: %s", got)
	}
	second, err := c.Apply(ctx, objs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(second); got != "unchanged,unchanged" || second.Changed() != 0 {
		ns, _ := c.Get(ctx, cluster.Ref{APIVersion: "v1", Kind: "Namespace", Name: "apply-test"})
		t.Fatalf("second apply: %s\n%v", got, ns)
	}
	if first.Objects[1].SHA256 != second.Objects[1].SHA256 || len(first.Objects[1].SHA256) != 64 {
		t.Fatalf("hashes differ or malformed: %s %s", first.Objects[1].SHA256, second.Objects[1].SHA256)
	}
	objs[1].Object["data"] = map[string]any{"a": "2"}
	third, err := c.Apply(ctx, objs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(third); got != "unchanged,configured" {
		t.Fatalf("third apply: %s", got)
	}
	cm, err := c.Get(ctx, cluster.Ref{APIVersion: "v1", Kind: "ConfigMap", Namespace: "apply-test", Name: "cm"})
	if err != nil {
		t.Fatal(err)
	}
	if mf := cm.GetManagedFields(); len(mf) != 1 || mf[0].Manager != cluster.FieldManager || mf[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Fatalf("managed fields: %+v", mf)
	}
}

func actions(r cluster.ApplyResult) string {
	var s []string
	for _, o := range r.Objects {
		s = append(s, string(o.Action))
	}
	return strings.Join(s, ",")
}

func TestDecodeErrorsNameFileAndDocument(t *testing.T) {
	_, err := cluster.Decode("bad.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nkind: ConfigMap\nmetadata: {name: b}\n"))
	var me *cluster.ManifestError
	if !errors.As(err, &me) || me.File != "bad.yaml" || me.Doc != 2 {
		t.Fatalf("want ManifestError for document 2 of bad.yaml, got %v", err)
	}
	_, err = cluster.Decode("noname.yaml", []byte("apiVersion: v1\nkind: ConfigMap\n"))
	if err == nil || !strings.Contains(err.Error(), "metadata.name") {
		t.Fatalf("want a metadata.name error, got %v", err)
	}
}

func TestWaitTimeoutReportsLastStatus(t *testing.T) {
	c, d := newClient(t)
	clustertest.Create(t, d, clustertest.CatalogSources, map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
		"metadata": map[string]any{"name": "slow", "namespace": "default"},
		"spec":     map[string]any{"sourceType": "grpc", "image": "registry.example:5000/redhat/redhat-operator-index:v4.20"},
	})
	clustertest.MustSetStatus(t, d, clustertest.CatalogSources, "default", "slow", map[string]any{
		"connectionState": map[string]any{"lastObservedState": "CONNECTING", "address": "slow.default.svc:50051", "lastConnect": "2026-01-01T00:00:00Z"},
	}, true)
	var lines []string
	err := c.Wait(context.Background(), cluster.Ref{APIVersion: cluster.OperatorsV1a1, Kind: "CatalogSource", Namespace: "default", Name: "slow"},
		"READY", 600*time.Millisecond, cluster.CatalogSourceReady, func(s string) { lines = append(lines, s) })
	var te *cluster.TimeoutError
	if !errors.As(err, &te) || te.Last != "connection CONNECTING" {
		t.Fatalf("want TimeoutError with last status, got %v", err)
	}
	if len(lines) != 1 {
		t.Fatalf("progress should report each change once, got %q", lines)
	}
}
