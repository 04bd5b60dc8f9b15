package upgrade

import (
	"fmt"
	"time"
)

// Thresholds are how long a condition may hold during an update before the watcher stops and
// explains. The defaults are the product's own, as `oc adm upgrade status` judges an update
// (openshift/oc pkg/cli/admin/upgrade/status): a ClusterOperator unavailable for 20 minutes or
// degraded for 40 is an error (controlplane.go: unavailableErrorThreshold,
// degradedErrorThreshold; both only warn after 5 — read in the stored copy of that file); an
// operator still progressing after 30 minutes is "longer than expected", machine-config after 90
// (it rolls every node), and a node whose drain has failed for an hour is an error — these three
// as the issue states oc's later status insights, not found in the stored copy, to be checked
// against the oc release the site runs. ReleaseAccepted=False and Failing=True on the
// ClusterVersion stop at once. A lab compresses them with Scale or a compressed clock.
type Thresholds struct {
	Unavailable    time.Duration `json:"unavailable"`
	Degraded       time.Duration `json:"degraded"`
	Progressing    time.Duration `json:"progressing"`
	ProgressingMCO time.Duration `json:"progressingMachineConfig"`
	Drain          time.Duration `json:"drain"`
	// GPUDriver is how long an updated GPU canary may run without a Ready driver pod for its new
	// OS build. Not the product's: ours, from the driver container's build-and-load on a new
	// kernel (minutes; 30 leaves room for a slow pull from the mirror).
	GPUDriver time.Duration `json:"gpuDriver"`
	// ReleaseRetry is how long a resumed run waits for the CVO to retry a release it refused
	// (ReleaseAccepted=False) when the refusal is the one the hop already stopped on. The CVO's
	// sync worker retries a payload it failed to load on its own: after reconcileInterval/8,
	// /4, /2 for the first failures, then every reconcileInterval, each wait jittered by up to
	// 20%; reconcileInterval is the resync period, 2 minutes times a random 1-2
	// (cluster-version-operator pkg/start minResyncPeriod and resyncPeriod, pkg/cvo
	// sync_worker.go Start), so at most about 4.8 minutes; a change of spec.desiredUpdate makes
	// it retry at once. A refusal kept keeps its lastTransitionTime (a new one is a new verdict
	// and stops the run). 5 minutes covers one full interval.
	ReleaseRetry time.Duration `json:"releaseRetry"`
	// OperatorInstall is how long an install-plans step waits for OLM to install a planned CSV
	// (an InstallPlan naming it, then the CSV Succeeded) before it stops the run. Not the
	// product's own threshold, but OLM's: its catalog operator fails an InstallPlan whose bundle
	// is not unpacked after --bundle-unpack-timeout (10 minutes by default; its plan execution
	// errors turn fatal after --install-plan-retry-timeout, 1 minute: operator-lifecycle-manager
	// cmd/catalog flags), and the new CSV then waits for its deployments, which Kubernetes
	// reports failed after progressDeadlineSeconds (600 by default). 20 minutes covers both.
	OperatorInstall time.Duration `json:"operatorInstall"`
}

// DefaultThresholds are the product's thresholds (see Thresholds).
func DefaultThresholds() Thresholds {
	return Thresholds{
		Unavailable:    20 * time.Minute,
		Degraded:       40 * time.Minute,
		Progressing:    30 * time.Minute,
		ProgressingMCO: 90 * time.Minute,
		Drain:          time.Hour,
		GPUDriver:      30 * time.Minute,
		ReleaseRetry:   5 * time.Minute,

		OperatorInstall: 20 * time.Minute,
	}
}

// Scale divides every threshold by f: a lab run compresses an hour into seconds.
func (t Thresholds) Scale(f float64) Thresholds {
	s := func(d time.Duration) time.Duration { return time.Duration(float64(d) / f) }
	t.Unavailable, t.Degraded, t.Progressing = s(t.Unavailable), s(t.Degraded), s(t.Progressing)
	t.ProgressingMCO, t.Drain, t.GPUDriver = s(t.ProgressingMCO), s(t.Drain), s(t.GPUDriver)
	t.ReleaseRetry, t.OperatorInstall = s(t.ReleaseRetry), s(t.OperatorInstall)
	return t
}

// Trip is why a watched update stops: the cause, the object, and the remedy, in one sentence
// (Sentence). Kind is stable, for callers that branch.
type Trip struct {
	Kind   string `json:"kind"`
	Object string `json:"object"`
	Cause  string `json:"cause"`
	Fix    string `json:"remedy"`
	// Since is when the condition began (its lastTransitionTime), zero when unknown.
	Since time.Time `json:"since,omitempty"`
	// Image is the release ClusterVersion spec.desiredUpdate named when the run stopped.
	Image string `json:"image,omitempty"`
	// Gathered is the gather taken on the trip (GatherTrip), when one was.
	Gathered *Gathered `json:"gathered,omitempty"`
}

// Trip kinds.
const (
	TripFailing         = "cluster-version-failing"
	TripReleaseRejected = "release-not-accepted"
	TripUnavailable     = "operator-unavailable"
	TripDegraded        = "operator-degraded"
	TripProgressing     = "operator-progressing-too-long"
	TripPoolDegraded    = "pool-degraded"
	TripDrainBlocked    = "drain-blocked"
)

func (t *Trip) Error() string { return t.Sentence() }

// Remedy says what a person does about it.
func (t *Trip) Remedy() string { return t.Fix }

// Sentence is the one-sentence explanation: cause, object, remedy.
func (t *Trip) Sentence() string {
	return fmt.Sprintf("%s: %s; %s", t.Object, t.Cause, t.Fix)
}

// Condition is a status condition as the watcher reads it.
type Cond struct {
	Type, Status, Reason, Message string
	Since                         time.Time
}

// OperatorView is one ClusterOperator as the watcher sees it.
type OperatorView struct {
	Name       string
	Version    string // status.versions[name=operator]
	Conditions []Cond
}

func cond(cs []Cond, typ string) Cond {
	for _, c := range cs {
		if c.Type == typ {
			return c
		}
	}
	return Cond{Type: typ, Status: "Unknown"}
}

// judgeCV trips on the ClusterVersion's own verdicts, which need no waiting.
func judgeCV(conds []Cond) *Trip {
	obj := "ClusterVersion/version"
	if c := cond(conds, "ReleaseAccepted"); c.Status == "False" {
		return &Trip{Kind: TripReleaseRejected, Object: obj, Since: c.Since,
			Cause: fmt.Sprintf("ReleaseAccepted=False (%s: %s)", c.Reason, c.Message),
			Fix:   "the CVO refused the release (signature, image or precondition): fix what the message names (a missing signature ConfigMap: apply the mirror's), then resume; the update has not started, the paused pools stay paused"}
	}
	if c := cond(conds, "Failing"); c.Status == "True" {
		return &Trip{Kind: TripFailing, Object: obj, Since: c.Since,
			Cause: fmt.Sprintf("Failing=True (%s: %s)", c.Reason, c.Message),
			Fix:   "fix what the message names (oc adm upgrade shows the same), then resume with bootstrap upgrade run"}
	}
	return nil
}

// judgeOperator trips on one operator against the thresholds at now. target is the version the
// hop goes to: an operator already at it is not "progressing too long".
func judgeOperator(o OperatorView, target string, th Thresholds, now time.Time) *Trip {
	obj := "ClusterOperator/" + o.Name
	if c := cond(o.Conditions, "Available"); c.Status == "False" && !c.Since.IsZero() && now.Sub(c.Since) >= th.Unavailable {
		return &Trip{Kind: TripUnavailable, Object: obj, Since: c.Since,
			Cause: fmt.Sprintf("unavailable for %s, over the %s threshold (%s: %s)", round(now.Sub(c.Since)), th.Unavailable, c.Reason, c.Message),
			Fix:   "look at the operator's pods and logs (oc adm inspect clusteroperator/" + o.Name + "), fix the cause, then resume"}
	}
	if c := cond(o.Conditions, "Degraded"); c.Status == "True" && !c.Since.IsZero() && now.Sub(c.Since) >= th.Degraded {
		return &Trip{Kind: TripDegraded, Object: obj, Since: c.Since,
			Cause: fmt.Sprintf("degraded for %s, over the %s threshold (%s: %s)", round(now.Sub(c.Since)), th.Degraded, c.Reason, c.Message),
			Fix:   "fix what the Degraded message names (oc describe clusteroperator " + o.Name + "), then resume"}
	}
	limit := th.Progressing
	if o.Name == "machine-config" {
		limit = th.ProgressingMCO
	}
	if c := cond(o.Conditions, "Progressing"); c.Status == "True" && o.Version != target && !c.Since.IsZero() && now.Sub(c.Since) >= limit {
		return &Trip{Kind: TripProgressing, Object: obj, Since: c.Since,
			Cause: fmt.Sprintf("progressing for %s, longer than expected (%s) (%s: %s)", round(now.Sub(c.Since)), limit, c.Reason, c.Message),
			Fix:   "find what it waits on (oc describe clusteroperator " + o.Name + "; for machine-config the pools and nodes), then resume"}
	}
	return nil
}

func round(d time.Duration) time.Duration {
	if d > time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}
