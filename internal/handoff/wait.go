package handoff

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
)

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
	err = c.Wait(ctx, ref, "Succeeded", o.Timeout, csvSucceeded, progress)
	if err != nil {
		return csv, plan, approved, fmt.Errorf("gitops operator: %w", err)
	}
	return csv, plan, approved, nil
}

// csvSucceeded is done when a ClusterServiceVersion's phase is Succeeded and fails when Failed.
func csvSucceeded(u *unstructured.Unstructured) (cluster.State, string) {
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

// Patience is how long Argo CD may keep reporting a problem before the handoff gives up on it
// (defaultPatience unless set). A comparison error may be transient (the repo-server read the Git
// server's CA before its ConfigMap reached the pod), and Argo CD retries on its own only every
// few minutes, so meanwhile the wait asks it for a hard refresh: at once, then every
// refreshEvery (or a quarter of the patience, when shorter), so it sees a few retries.
const defaultPatience = 2 * time.Minute

const refreshEvery = 15 * time.Second

// RefreshAnnotation asks Argo CD's application controller to compare an Application again;
// "hard" also bypasses the repo-server's manifest cache (which keeps a generation error).
const RefreshAnnotation = "argocd.argoproj.io/refresh"

// waiter judges Applications across the polls of one wait: a problem fails the wait only once
// Argo CD has reported problems for patience without a break, and Applications whose comparison
// failed are refreshed.
type waiter struct {
	c         *cluster.Client
	ctx       context.Context
	patience  time.Duration
	troubled  time.Time            // when problems started being reported, zero when none
	every     time.Duration        // between refreshes of one Application
	refreshed map[string]time.Time // Application -> last refresh asked
}

func newWaiter(ctx context.Context, c *cluster.Client, patience time.Duration) *waiter {
	if patience <= 0 {
		patience = defaultPatience
	}
	return &waiter{c: c, ctx: ctx, patience: patience, every: min(refreshEvery, patience/4), refreshed: map[string]time.Time{}}
}

// judge turns a Failed verdict into Pending until problems have lasted patience.
func (w *waiter) judge(st cluster.State, msg string) (cluster.State, string) {
	if st != cluster.Failed {
		w.troubled = time.Time{}
		return st, msg
	}
	if w.troubled.IsZero() {
		w.troubled = time.Now()
	}
	if time.Since(w.troubled) < w.patience {
		return cluster.Pending, msg
	}
	return cluster.Failed, msg
}

// refresh asks for a hard refresh of an Application whose comparison failed, at most every
// w.every.
func (w *waiter) refresh(u *unstructured.Unstructured) {
	if u == nil || !hasErrorCondition(u) {
		return
	}
	w.refreshNow(u)
}

// refreshNow asks for a hard refresh of u, at most every w.every.
func (w *waiter) refreshNow(u *unstructured.Unstructured) {
	if time.Since(w.refreshed[u.GetName()]) < w.every {
		return
	}
	w.refreshed[u.GetName()] = time.Now()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"hard"}}}`, RefreshAnnotation)
	_, _ = w.c.Patch(w.ctx, appRef(u.GetName()), []byte(patch)) // best effort: the wait goes on either way
}

// waitApplication waits until Argo CD reports the named Application in ArgoNamespace Synced and
// Healthy, then every Application there (the root's children and what its ApplicationSets
// generate) Synced and Healthy and every ApplicationSet's Applications up to date. A problem
// Argo CD reports for longer than patience (defaultPatience when 0) fails the wait, naming the
// Application and Argo CD's message; so does the timeout, with the last status seen.
//
// With commit set (the full commit id the jump host found the revision at), the Application is
// done only when Argo CD reports it synced at that commit: until then the wait asks Argo CD for a
// hard refresh (it polls a repository only every few minutes), so a handoff run after a push
// never takes a verdict on an older commit for one on the new.
func waitApplication(ctx context.Context, c *cluster.Client, name, commit string, timeout, patience time.Duration, progress cluster.Progress) (AppStatus, error) {
	ref := appRef(name)
	w := newWaiter(ctx, c, patience)
	what := "Synced and Healthy"
	if commit != "" {
		what += " at " + commit
	}
	err := c.Wait(ctx, ref, what, timeout, func(u *unstructured.Unstructured) (cluster.State, string) {
		w.refresh(u)
		st, msg := w.judge(appCheck(u))
		if st == cluster.Done && commit != "" {
			if got := readApp(u).Revision; got != commit {
				w.refreshNow(u)
				return cluster.Pending, fmt.Sprintf("Synced and Healthy at %s, but the repository's revision is commit %s (checked from the jump host): waiting for Argo CD to sync it (hard refresh asked)", orUnknown(got), commit)
			}
		}
		return st, msg
	}, progress)
	var st AppStatus
	if u, gerr := c.Get(ctx, ref); gerr == nil {
		st = readApp(u)
	}
	if err != nil {
		var fe *cluster.FailedError
		var te *cluster.TimeoutError
		if errors.As(err, &fe) || errors.As(err, &te) {
			if child := childProblem(ctx, c, name); child != "" {
				err = fmt.Errorf("%w; first child with a problem: %s", err, child)
			}
			if te != nil {
				var root *unstructured.Unstructured
				if u, gerr := c.Get(ctx, ref); gerr == nil {
					root = u
				}
				sets, _ := c.List(ctx, ArgoV1a1, "ApplicationSet", ArgoNamespace, "")
				if q := quietControllers(root, sets, time.Now()); len(q) > 0 {
					err = fmt.Errorf("%w; %s", err, strings.Join(q, "; "))
				}
			}
			return st, &ApplicationError{App: name, Commit: commit, Err: err}
		}
		return st, err
	}
	w = newWaiter(ctx, c, patience)
	err = c.Wait(ctx, ref, "every Application Synced and Healthy", timeout, func(*unstructured.Unstructured) (cluster.State, string) {
		return w.judge(w.all())
	}, progress)
	return st, err
}

// all judges every Application and ApplicationSet in ArgoNamespace, naming the first that is
// not done (ApplicationSets first: their Applications may not exist yet).
func (w *waiter) all() (cluster.State, string) {
	sets, err := w.c.List(w.ctx, ArgoV1a1, "ApplicationSet", ArgoNamespace, "")
	if err != nil {
		return cluster.Pending, "cannot list ApplicationSets: " + err.Error()
	}
	for i := range sets {
		as := &sets[i]
		if s, reason, msg, _ := cluster.Condition(as, "ErrorOccurred"); s == "True" {
			return cluster.Failed, fmt.Sprintf("ApplicationSet %s: ErrorOccurred (%s): %s", as.GetName(), reason, msg)
		}
		if s, _, msg, _ := cluster.Condition(as, "ResourcesUpToDate"); s != "True" {
			return cluster.Pending, fmt.Sprintf("ApplicationSet %s: Applications not up to date yet %s", as.GetName(), msg)
		}
	}
	apps, err := w.c.List(w.ctx, ArgoV1a1, "Application", ArgoNamespace, "")
	if err != nil {
		return cluster.Pending, "cannot list Applications: " + err.Error()
	}
	sort.Slice(apps, func(i, j int) bool { return apps[i].GetName() < apps[j].GetName() })
	var failed, pending string
	for i := range apps {
		a := &apps[i]
		w.refresh(a)
		st, msg := appCheck(a)
		switch {
		case st == cluster.Failed && failed == "":
			failed = "Application " + a.GetName() + ": " + msg
		case st == cluster.Pending && pending == "":
			pending = "Application " + a.GetName() + ": " + msg
		}
	}
	switch {
	case failed != "":
		return cluster.Failed, failed
	case pending != "":
		return cluster.Pending, pending
	}
	return cluster.Done, fmt.Sprintf("%d Applications and %d ApplicationSets Synced and Healthy", len(apps), len(sets))
}

// quietAfter is how long Argo CD may leave an Application unreconciled before a timed-out wait
// says its controller is not working: the application-controller reconciles every Application
// at least every timeout.reconciliation (3 min by default), with up to a minute of jitter.
const quietAfter = 5 * time.Minute

// quietControllers says which of Argo CD's controllers has stopped answering, from what they
// write: the application-controller stamps status.reconciledAt on every reconciliation of an
// Application, and the ApplicationSet controller writes conditions on every ApplicationSet it
// reconciles. A timed-out wait with either silent points at the controller's pod, not at the
// repository. The names are the OpenShift GitOps default instance's.
func quietControllers(root *unstructured.Unstructured, sets []unstructured.Unstructured, now time.Time) []string {
	var out []string
	if root != nil {
		at := nested(root, "status", "reconciledAt")
		t, err := time.Parse(time.RFC3339, at)
		switch {
		case at == "":
			out = append(out, fmt.Sprintf("Argo CD's application-controller has never reconciled Application %s: check the pod openshift-gitops-application-controller-0 and its log", root.GetName()))
		case err == nil && now.Sub(t) > quietAfter:
			out = append(out, fmt.Sprintf("Argo CD's application-controller last reconciled Application %s at %s (%s before this check): check the pod openshift-gitops-application-controller-0 and its log",
				root.GetName(), at, now.Sub(t).Round(time.Second)))
		}
	}
	for i := range sets {
		if conds, _, _ := unstructured.NestedSlice(sets[i].Object, "status", "conditions"); len(conds) == 0 {
			out = append(out, fmt.Sprintf("ApplicationSet %s has no status: Argo CD's ApplicationSet controller has not reconciled it; check the deployment openshift-gitops-applicationset-controller and its log", sets[i].GetName()))
		}
	}
	return out
}
