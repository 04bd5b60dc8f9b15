package handoff

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
)

// appProblem names what Argo CD reports wrong, in its words; a healthy or progressing
// Application has none.
func TestAppProblem(t *testing.T) {
	app := func(status map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"status": status}}
	}
	for _, tc := range []struct {
		name   string
		status map[string]any
		want   string
	}{
		{"synced and healthy", map[string]any{"sync": map[string]any{"status": "Synced"}, "health": map[string]any{"status": "Healthy"}}, ""},
		{"progressing", map[string]any{"health": map[string]any{"status": "Progressing"}}, ""},
		{"warning condition", map[string]any{"conditions": []any{map[string]any{"type": "OrphanedResourceWarning", "message": "1 orphaned"}}}, ""},
		{"comparison error", map[string]any{"sync": map[string]any{"status": "Unknown"}, "conditions": []any{
			map[string]any{"type": "ComparisonError", "message": "Failed to load target state: authentication required"}}},
			"ComparisonError: Failed to load target state: authentication required"},
		{"degraded resource", map[string]any{"health": map[string]any{"status": "Degraded"}, "resources": []any{
			map[string]any{"kind": "Deployment", "namespace": "ns", "name": "d", "health": map[string]any{"status": "Degraded", "message": "deadline"}}}},
			"Degraded: Deployment ns/d: deadline"},
		{"failed sync", map[string]any{"operationState": map[string]any{"phase": "Failed", "message": "one or more objects failed to apply"}}, "sync Failed: one or more objects failed to apply"},
	} {
		if got := appProblem(app(tc.status)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A problem fails the wait only once Argo CD has reported problems for the whole patience; a
// good verdict in between starts the count again.
func TestWaiterPatience(t *testing.T) {
	w := newWaiter(t.Context(), nil, 50*time.Millisecond)
	if w.every != 50*time.Millisecond/4 {
		t.Errorf("refresh every %s, want a quarter of the patience", w.every)
	}
	if st, msg := w.judge(cluster.Failed, "ComparisonError: x509"); st != cluster.Pending || !strings.Contains(msg, "x509") {
		t.Fatalf("first problem: %v %q, want Pending with the message", st, msg)
	}
	time.Sleep(60 * time.Millisecond)
	if st, _ := w.judge(cluster.Pending, "sync OutOfSync"); st != cluster.Pending {
		t.Fatalf("a pending verdict: %v", st)
	}
	if st, _ := w.judge(cluster.Failed, "ComparisonError: x509"); st != cluster.Pending {
		t.Fatalf("a problem right after a good verdict: %v, want Pending", st)
	}
	time.Sleep(60 * time.Millisecond)
	if st, _ := w.judge(cluster.Failed, "ComparisonError: authentication required"); st != cluster.Failed {
		t.Fatalf("problems for longer than the patience: %v, want Failed", st)
	}
	if d := newWaiter(t.Context(), nil, 0); d.patience != DefaultPatience || d.every != refreshEvery {
		t.Errorf("defaults: patience %s, refresh every %s", d.patience, d.every)
	}
}
