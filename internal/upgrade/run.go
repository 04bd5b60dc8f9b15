package upgrade

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
)

// Journal is where a run records its steps; pipeline.Steps is one. Done says whether a step was
// recorded (decoding its data into out); Record returns once the step is on disk.
type Journal interface {
	Done(key string, out any) bool
	Record(key string, data any) error
}

// The steps of one hop, in order; each is journaled as "<to>/<step>".
const (
	StepContract     = "contract"
	StepPreflight    = "preflight"
	StepBackup       = "etcd-backup"
	StepSignatures   = "signatures"
	StepMirror       = "mirror-config" // the hop's IDMS/ITMS and next-minor CatalogSources
	StepInstallPlans = "install-plans" // the operator updates the plan puts before the hop
	StepCanary       = "canary-pool"
	StepPause        = "pause"
	StepHealthPause  = "health-checks-pause"   // the MachineHealthChecks, resumed by close
	StepIntent       = "desired-update-intent" // journaled BEFORE desiredUpdate is set
	StepDesired      = "desired-update"        // journaled AFTER
	StepControlPlane = "control-plane"
	StepCanaryDone   = "canary-done"
	StepSoak         = "soak"
	StepUnpause      = "unpause"
	StepWorkers      = "workers"
	StepClose        = "close"
	StepAfterBackup  = "etcd-backup-after"   // the post-hop backup, once history says Completed
	StepAfterPlans   = "install-plans-after" // those it puts after the hop
)

// CanaryLabel is the node role label that puts a node into the canary pool.
const CanaryLabel = "node-role.kubernetes.io/worker-canary"

// RunOptions are one hop's run.
type RunOptions struct {
	Hop Hop
	// Previous is the plan's hop before Hop, if any: Hop does not start while the operator
	// updates Previous puts after it are not installed.
	Previous *Hop
	// AcceptedBy names who accepted the rollback contract (--accept-rollback-contract, or the
	// person who confirmed it): a run refuses without it.
	AcceptedBy string
	// Canary is the worker node to update first (default: the first worker by name).
	Canary string
	// CanaryPool is the canary pool's name (default worker-canary).
	CanaryPool string
	// Signatures are the hop's signature ConfigMaps, applied before desiredUpdate.
	Signatures []*unstructured.Unstructured
	// Mirror are the hop's ImageDigestMirrorSets, ImageTagMirrorSets and CatalogSources (the
	// mirror's outputs for the hop's content), applied before the InstallPlans are approved.
	Mirror []*unstructured.Unstructured
	Acks   []string
	// MaxUnavailable is how many nodes of each pool unpaused after the soak may update at once,
	// an int or a percent as MachineConfigPool spec.maxUnavailable takes it; nil leaves each
	// pool's own setting (the MCO's default: one).
	MaxUnavailable *intstr.IntOrString
	Soak           time.Duration
	Thresholds     Thresholds
	Poll           time.Duration
	// Now is the clock (time.Now when nil); tests compress it with the thresholds.
	Now      func() time.Time
	Progress func(string)
	// Blacklist are the kernel modules the canary's rendered config must still blacklist after
	// the update (the day-1 irdma blacklist); Prober, when set, also asks the node (lsmod over SSH).
	Blacklist []string
	Prober    cluster.ModuleProber
	// GPUNamespace is where the GPU operator runs its driver pods (DefaultGPUNamespace).
	GPUNamespace string
	// Backup takes the hop's etcd backup (TakeBackup on a control-plane node); the hop's first
	// change waits for it. A run without it refuses, unless NoBackup says why there is none.
	Backup   func(ctx context.Context) (*Backup, error)
	NoBackup string
	// AfterBackup takes the post-hop backup, once the close step has seen history Completed
	// (Backup again when nil: the same script, node and checks, its files beside the first).
	AfterBackup func(ctx context.Context) (*Backup, error)
	// Crash, when set, is called after each step's work (its cluster writes) and before its
	// journal record, with the step: a test returns an error there to play a kill between the
	// two. Every step that writes reads the cluster first, so the resumed run writes nothing twice.
	Crash func(step string) error
}

// Result is what a run of a hop did.
type Result struct {
	Hop      string    `json:"hop"`
	Findings []Finding `json:"preflight,omitempty"`
	Paused   []string  `json:"paused,omitempty"`
	Done     bool      `json:"done"`
}

// PreflightError is a preflight that failed: no step was taken.
type PreflightError struct{ Findings []Finding }

func (e *PreflightError) Error() string {
	var fails []string
	for _, f := range e.Findings {
		if f.Result == Fail {
			fails = append(fails, f.Object+": "+f.Message)
		}
	}
	return fmt.Sprintf("upgrade preflight failed (%d): %s", len(fails), strings.Join(fails, "; "))
}

// Remedy says what to do.
func (e *PreflightError) Remedy() string {
	return "fix each failed check (bootstrap upgrade preflight lists them with their objects), then run again"
}

// ErrNoBackup is returned when a run has no way to take the hop's etcd backup and no reason
// given for going without one.
var ErrNoBackup = errors.New("no etcd backup configured: name a control-plane node to back up (--backup-node NAME=ADDRESS with --ssh-key), or say why the hop goes without one (--no-etcd-backup REASON)")

// ErrContract is returned when the rollback contract was not accepted.
var ErrContract = errors.New("the rollback contract was not accepted: read it (printed above) and pass --accept-rollback-contract, or confirm it when asked")

type runner struct {
	c   *cluster.Client
	j   Journal
	o   RunOptions
	key func(string) string
	w   *watcher
	// intentHere: this process journaled the desiredUpdate intent (its node configs are its own
	// baseline, not a killed run's).
	intentHere bool
}

// Run runs one hop, resuming from the journal: steps recorded there are not done again, and the
// one write that cannot be repeated blindly — spec.desiredUpdate — is decided from the cluster:
// when the ClusterVersion already asks for the hop's release, the write is journaled, not redone.
// A watched condition past its threshold stops the run with a *Trip: no further step is taken
// and the pools paused stay paused.
func Run(ctx context.Context, c *cluster.Client, j Journal, o RunOptions) (*Result, error) {
	if o.CanaryPool == "" {
		o.CanaryPool = "worker-canary"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	if o.Thresholds == (Thresholds{}) {
		o.Thresholds = DefaultThresholds()
	}
	if o.Thresholds.GPUDriver <= 0 {
		o.Thresholds.GPUDriver = DefaultThresholds().GPUDriver
	}
	if o.Thresholds.ReleaseRetry <= 0 {
		o.Thresholds.ReleaseRetry = DefaultThresholds().ReleaseRetry
	}
	if o.Thresholds.OperatorInstall <= 0 {
		o.Thresholds.OperatorInstall = DefaultThresholds().OperatorInstall
	}
	if o.Hop.Payload == "" || !strings.Contains(o.Hop.Payload, "@sha256:") {
		return nil, fmt.Errorf("hop %s: the release must be named by digest (pullspec@sha256:...), got %q", o.Hop.To, o.Hop.Payload)
	}
	r := &runner{c: c, j: j, o: o, key: func(s string) string { return o.Hop.To + "/" + s }}
	r.w = &watcher{r: r, seen: map[string]time.Time{}}
	res := &Result{Hop: o.Hop.From + " -> " + o.Hop.To}

	if err := r.contract(); err != nil {
		return res, err
	}
	v, err := ReadView(ctx, c, o.Now())
	if err != nil {
		return res, err
	}
	started := r.j.Done(r.key(StepDesired), nil) || v.CV.Desired.Image == o.Hop.Payload
	if !started { // preflight gates the hop until desiredUpdate is set; after, the update is watched
		fs, err := Preflight(ctx, c, v, PreflightOptions{CanaryPool: o.CanaryPool, Paused: r.ours(v), Acks: o.Acks,
			Hops: []Hop{o.Hop}, Signatures: o.Signatures})
		if err != nil {
			return res, err
		}
		prev, err := PreviousOperators(ctx, c, o.Previous) // operators.go
		if err != nil {
			return res, err
		}
		fs = append(fs, prev...)
		res.Findings = fs
		if Failed(fs) {
			return res, &PreflightError{Findings: fs}
		}
	}
	steps := []struct {
		name string
		do   func(context.Context) (any, error)
	}{
		{StepBackup, r.backup},
		{StepSignatures, r.signatures},
		{StepMirror, r.mirror},
		// The updates the plan puts before the hop come from the minor being left, so they are
		// installed before the Subscriptions move to the next minor's catalog.
		{StepInstallPlans, r.operators(true)}, // operators.go: approve, then wait until installed
		{StepSubscriptions, r.subscriptions},
		{StepCanary, r.canary},
		{StepPause, r.pause},
		{StepHealthPause, r.pauseHealthChecks},
		{StepDesired, r.desired},
		{StepControlPlane, r.controlPlane},
		{StepCanaryDone, r.canaryDone},
		{StepSoak, r.soak},
		{StepUnpause, r.unpause},
		{StepWorkers, r.workers},
		{StepClose, r.close},
		{StepAfterBackup, r.afterBackup},
		{StepAfterPlans, r.operators(false)},
	}
	for _, s := range steps {
		if r.j.Done(r.key(s.name), nil) {
			continue
		}
		r.say("%s: %s", res.Hop, s.name)
		data, err := s.do(ctx)
		if err == nil {
			err = r.crash(s.name)
		}
		if err != nil {
			res.Paused = r.pausedByUs()
			return res, r.tripped(err)
		}
		if err := r.j.Record(r.key(s.name), data); err != nil {
			return res, err
		}
	}
	res.Done = true
	return res, nil
}

func (r *runner) say(format string, a ...any) {
	if r.o.Progress != nil {
		r.o.Progress(fmt.Sprintf(format, a...))
	}
}

func (r *runner) crash(step string) error {
	if r.o.Crash != nil {
		return r.o.Crash(step)
	}
	return nil
}

// contract journals the acceptance of the hop's rollback contract, once.
func (r *runner) contract() error {
	if r.j.Done(r.key(StepContract), nil) {
		return nil
	}
	if strings.TrimSpace(r.o.AcceptedBy) == "" {
		return ErrContract
	}
	text := Contract(r.o.Hop, "")
	return r.j.Record(r.key(StepContract), map[string]string{"sha256": ContractSum(text), "acceptedBy": r.o.AcceptedBy})
}

// pausedByUs are the pools the journal says this hop paused.
func (r *runner) pausedByUs() []string {
	var p struct{ Pools []string }
	r.j.Done(r.key(StepPause), &p)
	return p.Pools
}

// ours are the pools this hop paused: those the journal names, and those carrying the hop's
// AnnPausedBy (a run killed after the pause, before its record).
func (r *runner) ours(v *View) []string {
	out := r.pausedByUs()
	for _, p := range v.Pools {
		if p.Paused && p.PausedBy == r.pausedValue() && !contains(out, p.Name) {
			out = append(out, p.Name)
		}
	}
	return out
}

// backup takes the hop's etcd backup before anything of the hop changes the cluster; the
// journal keeps its node, files and SHA-256 for the restore runbook and the report.
func (r *runner) backup(ctx context.Context) (any, error) {
	if r.o.Backup == nil {
		if strings.TrimSpace(r.o.NoBackup) == "" {
			return nil, ErrNoBackup
		}
		return map[string]string{"skipped": r.o.NoBackup}, nil
	}
	r.say("%s: etcd backup", r.o.Hop.To)
	return r.o.Backup(ctx)
}

// afterBackup takes the post-hop etcd backup: the close step has seen history Completed and
// every pool updated, so the snapshot is of the hop's release, the one a later restore wants.
func (r *runner) afterBackup(ctx context.Context) (any, error) {
	take := r.o.AfterBackup
	if take == nil {
		take = r.o.Backup
	}
	if take == nil {
		if strings.TrimSpace(r.o.NoBackup) == "" {
			return nil, ErrNoBackup
		}
		return map[string]string{"skipped": r.o.NoBackup}, nil
	}
	r.say("%s: etcd backup after the hop", r.o.Hop.To)
	return take(ctx)
}
