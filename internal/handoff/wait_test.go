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
	if d := newWaiter(t.Context(), nil, 0); d.patience != defaultPatience || d.every != refreshEvery {
		t.Errorf("defaults: patience %s, refresh every %s", d.patience, d.every)
	}
}

// A timed-out wait names a controller that stopped writing: the root Application's reconciledAt
// older than quietAfter (or never written), an ApplicationSet without conditions. A controller
// that reconciled recently and an ApplicationSet with conditions are not named.
func TestQuietControllers(t *testing.T) {
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	root := func(at string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"sync": map[string]any{"status": "OutOfSync"}}}}
		u.SetName("root")
		if at != "" {
			_ = unstructured.SetNestedField(u.Object, at, "status", "reconciledAt")
		}
		return u
	}
	set := func(name string, conds ...string) unstructured.Unstructured {
		u := unstructured.Unstructured{Object: map[string]any{}}
		u.SetName(name)
		var cs []any
		for _, c := range conds {
			cs = append(cs, map[string]any{"type": c, "status": "True"})
		}
		if cs != nil {
			_ = unstructured.SetNestedSlice(u.Object, cs, "status", "conditions")
		}
		return u
	}
	for _, tc := range []struct {
		name string
		root *unstructured.Unstructured
		sets []unstructured.Unstructured
		want []string // substrings, one per line of the answer, in order
	}{
		{"all answering", root("2026-12-05T09:58:00Z"), []unstructured.Unstructured{set("tenants", "ResourcesUpToDate", "ParametersGenerated")}, nil},
		{"reconciled exactly at the limit", root("2026-12-05T09:55:00Z"), nil, nil},
		{"application-controller silent", root("2026-12-05T09:40:00Z"), nil,
			[]string{"last reconciled Application root at 2026-12-05T09:40:00Z (20m0s before this check): check the pod openshift-gitops-application-controller-0"}},
		{"never reconciled", root(""), nil, []string{"has never reconciled Application root"}},
		{"applicationset controller silent", root("2026-12-05T09:59:00Z"),
			[]unstructured.Unstructured{set("tenants"), set("teams", "ErrorOccurred")},
			[]string{"ApplicationSet tenants has no status: Argo CD's ApplicationSet controller has not reconciled it; check the deployment openshift-gitops-applicationset-controller"}},
		{"both, and no root", nil, []unstructured.Unstructured{set("a"), set("b")}, []string{"ApplicationSet a has no status", "ApplicationSet b has no status"}},
	} {
		got := quietControllers(tc.root, tc.sets, now)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %q, want %d lines like %q", tc.name, got, len(tc.want), tc.want)
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], tc.want[i]) {
				t.Errorf("%s: line %d %q, want it to contain %q", tc.name, i, got[i], tc.want[i])
			}
		}
	}
}
