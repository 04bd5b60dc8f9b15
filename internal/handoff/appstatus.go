package handoff

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
)

// Reading Argo CD's Application status: sync and health, the problem it reports (a degraded
// resource, an error condition) and the error the handoff returns with Argo CD's own words.
func nested(u *unstructured.Unstructured, path ...string) string {
	if u == nil {
		return ""
	}
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return s
}

func appRef(name string) cluster.Ref {
	return cluster.Ref{APIVersion: ArgoV1a1, Kind: "Application", Namespace: ArgoNamespace, Name: name}
}

// AppStatus is Argo CD's view of an Application.
type AppStatus struct {
	Sync, Health, Revision string
}

func readApp(u *unstructured.Unstructured) AppStatus {
	return AppStatus{
		Sync:     nested(u, "status", "sync", "status"),
		Health:   nested(u, "status", "health", "status"),
		Revision: nested(u, "status", "sync", "revision"),
	}
}

// appCheck is done when Argo CD reports the Application Synced and Healthy and fails when it
// reports a problem (appProblem), in Argo CD's words.
func appCheck(u *unstructured.Unstructured) (cluster.State, string) {
	if u == nil {
		return cluster.Pending, ""
	}
	st := readApp(u)
	if p := appProblem(u); p != "" {
		return cluster.Failed, p
	}
	if st.Sync == "Synced" && st.Health == "Healthy" {
		return cluster.Done, "Synced and Healthy at " + st.Revision
	}
	msg := fmt.Sprintf("sync %s, health %s", orUnknown(st.Sync), orUnknown(st.Health))
	if p := nested(u, "status", "operationState", "phase"); p != "" {
		msg += ", last sync " + p
		if m := nested(u, "status", "operationState", "message"); m != "" {
			msg += ": " + m
		}
	}
	return cluster.Pending, msg
}

// appProblem is what Argo CD reports wrong with an Application, in its own words: health
// Degraded (naming the first degraded resource), an error condition (ComparisonError when the
// source cannot be fetched or rendered, InvalidSpecError, SyncError), or a sync that ended Failed
// or Error. "" when there is none.
func appProblem(u *unstructured.Unstructured) string {
	if readApp(u).Health == "Degraded" {
		return "Degraded: " + firstDegraded(u)
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		typ, _ := m["type"].(string)
		if strings.HasSuffix(typ, "Error") {
			msg, _ := m["message"].(string)
			return typ + ": " + msg
		}
	}
	switch p := nested(u, "status", "operationState", "phase"); p {
	case "Failed", "Error":
		return "sync " + p + ": " + nested(u, "status", "operationState", "message")
	}
	return ""
}

// hasErrorCondition reports whether Argo CD's last comparison of the Application failed (as
// opposed to a health verdict): a refresh may clear it.
func hasErrorCondition(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if typ, _ := m["type"].(string); strings.HasSuffix(typ, "Error") {
			return true
		}
	}
	return false
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// firstDegraded names the first resource of the application whose health is Degraded.
func firstDegraded(u *unstructured.Unstructured) string {
	res, _, _ := unstructured.NestedSlice(u.Object, "status", "resources")
	for _, r := range res {
		m, _ := r.(map[string]any)
		h, _ := m["health"].(map[string]any)
		if h == nil || h["status"] != "Degraded" {
			continue
		}
		name := fmt.Sprintf("%v %v", m["kind"], m["name"])
		if ns, _ := m["namespace"].(string); ns != "" {
			name = fmt.Sprintf("%v %s/%v", m["kind"], ns, m["name"])
		}
		if msg, _ := h["message"].(string); msg != "" {
			return name + ": " + msg
		}
		return name
	}
	if m := nested(u, "status", "health", "message"); m != "" {
		return m
	}
	return "no resource reports why"
}

// childProblem names the first Application other than root with a problem Argo CD reports.
func childProblem(ctx context.Context, c *cluster.Client, root string) string {
	apps, err := c.List(ctx, ArgoV1a1, "Application", ArgoNamespace, "")
	if err != nil {
		return ""
	}
	sort.Slice(apps, func(i, j int) bool { return apps[i].GetName() < apps[j].GetName() })
	for i := range apps {
		a := &apps[i]
		if a.GetName() == root {
			continue
		}
		if p := appProblem(a); p != "" {
			return "Application " + a.GetName() + ": " + p
		}
	}
	return ""
}

// ApplicationError is Argo CD reporting a problem with an Application (or not reporting it Synced
// and Healthy in time): Err carries Argo CD's own message.
type ApplicationError struct {
	App    string
	Commit string // the commit the repository's revision named, when known
	Err    error
}

func (e *ApplicationError) Error() string { return e.Err.Error() }
func (e *ApplicationError) Unwrap() error { return e.Err }

// Remedy implements the remedy contract (pipeline.Remedier).
func (e *ApplicationError) Remedy() string {
	at := ""
	if e.Commit != "" {
		at = " (commit " + e.Commit + ")"
	}
	return fmt.Sprintf("fix what Argo CD reports above in the GitOps repository%s or the cluster, push, then run `bootstrap replay handoff` "+
		"(it waits for Argo CD to sync the new commit); Argo CD's whole account: oc -n %s describe application %s", at, ArgoNamespace, e.App)
}
