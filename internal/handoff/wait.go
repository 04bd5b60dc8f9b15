package handoff

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
)

func nested(u *unstructured.Unstructured, path ...string) string {
	if u == nil {
		return ""
	}
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return s
}

// waitOperator waits for OLM to resolve the Subscription, approves its InstallPlan when approval
// is Manual, and waits for the CSV to succeed. It returns the CSV, the plan, and the plan's name
// again when this call approved it.
func waitOperator(ctx context.Context, c *cluster.Client, o Options, progress cluster.Progress) (string, string, string, error) {
	sub := cluster.Ref{APIVersion: cluster.OperatorsV1a1, Kind: "Subscription", Namespace: OperatorNamespace, Name: OperatorPackage}
	var csv, plan string
	err := c.Wait(ctx, sub, "resolved", o.Timeout, func(u *unstructured.Unstructured) (cluster.State, string) {
		if u == nil {
			return cluster.Pending, ""
		}
		if s, reason, msg, _ := cluster.Condition(u, "ResolutionFailed"); s == "True" {
			return cluster.Failed, fmt.Sprintf("OLM cannot resolve %s from %s/%s channel %s (%s): %s", OperatorPackage, o.SourceNamespace, o.Source, o.Channel, reason, msg)
		}
		csv = nested(u, "status", "currentCSV")
		plan = nested(u, "status", "installPlanRef", "name")
		if plan == "" {
			plan = nested(u, "status", "installplan", "name")
		}
		if csv != "" && plan != "" {
			return cluster.Done, fmt.Sprintf("resolved to %s by InstallPlan %s", csv, plan)
		}
		if s, _, msg, _ := cluster.Condition(u, "CatalogSourcesUnhealthy"); s == "True" {
			return cluster.Pending, "catalog sources unhealthy: " + msg
		}
		if st := nested(u, "status", "state"); st != "" {
			return cluster.Pending, "subscription state " + st
		}
		return cluster.Pending, "waiting for OLM to resolve the subscription"
	}, progress)
	if err != nil {
		return "", "", "", fmt.Errorf("gitops operator: %w", err)
	}
	approved := ""
	if o.Approval == "Manual" {
		ref := cluster.Ref{APIVersion: cluster.OperatorsV1a1, Kind: "InstallPlan", Namespace: OperatorNamespace, Name: plan}
		ip, err := c.Get(ctx, ref)
		if err != nil {
			return csv, plan, "", fmt.Errorf("gitops operator: read %s: %w", ref, err)
		}
		if ok, _, _ := unstructured.NestedBool(ip.Object, "spec", "approved"); !ok {
			if _, err := c.Patch(ctx, ref, []byte(`{"spec":{"approved":true}}`)); err != nil {
				return csv, plan, "", fmt.Errorf("gitops operator: approve %s: %w", ref, err)
			}
			approved = plan
			if progress != nil {
				progress("approved InstallPlan " + plan + " for " + csv)
			}
		}
	}
	ref := cluster.Ref{APIVersion: cluster.OperatorsV1a1, Kind: "ClusterServiceVersion", Namespace: OperatorNamespace, Name: csv}
	err = c.Wait(ctx, ref, "Succeeded", o.Timeout, CSVSucceeded, progress)
	if err != nil {
		return csv, plan, approved, fmt.Errorf("gitops operator: %w", err)
	}
	return csv, plan, approved, nil
}

// CSVSucceeded is done when a ClusterServiceVersion's phase is Succeeded and fails when Failed.
func CSVSucceeded(u *unstructured.Unstructured) (cluster.State, string) {
	if u == nil {
		return cluster.Pending, ""
	}
	phase, reason, msg := nested(u, "status", "phase"), nested(u, "status", "reason"), nested(u, "status", "message")
	switch phase {
	case "Succeeded":
		return cluster.Done, "Succeeded"
	case "Failed":
		return cluster.Failed, fmt.Sprintf("Failed (%s): %s", reason, msg)
	case "":
		return cluster.Pending, "no phase yet"
	default:
		return cluster.Pending, fmt.Sprintf("%s (%s): %s", phase, reason, msg)
	}
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

// appCheck is done when Synced and Healthy and fails when Degraded, naming the first degraded
// resource with Argo CD's message.
func appCheck(u *unstructured.Unstructured) (cluster.State, string) {
	if u == nil {
		return cluster.Pending, ""
	}
	st := readApp(u)
	if st.Health == "Degraded" {
		return cluster.Failed, "Degraded: " + firstDegraded(u)
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

// WaitApplication waits for the named Application in ArgoNamespace to be Synced and Healthy. When it
// is Degraded, or the wait times out, the error names the first degraded child Application (the
// app-of-apps' children are Applications) and its first degraded resource.
func WaitApplication(ctx context.Context, c *cluster.Client, name string, timeout time.Duration, progress cluster.Progress) (AppStatus, error) {
	ref := appRef(name)
	err := c.Wait(ctx, ref, "Synced and Healthy", timeout, appCheck, progress)
	var st AppStatus
	if u, gerr := c.Get(ctx, ref); gerr == nil {
		st = readApp(u)
	}
	var fe *cluster.FailedError
	var te *cluster.TimeoutError
	if errors.As(err, &fe) || errors.As(err, &te) {
		if child := degradedChild(ctx, c, name); child != "" {
			return st, fmt.Errorf("%w; first degraded child: %s", err, child)
		}
	}
	return st, err
}

func degradedChild(ctx context.Context, c *cluster.Client, root string) string {
	apps, err := c.List(ctx, ArgoV1a1, "Application", ArgoNamespace, "")
	if err != nil {
		return ""
	}
	for i := range apps {
		a := &apps[i]
		if a.GetName() == root || readApp(a).Health != "Degraded" {
			continue
		}
		return "Application " + a.GetName() + ": " + firstDegraded(a)
	}
	return ""
}
