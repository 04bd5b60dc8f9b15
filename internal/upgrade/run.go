package upgrade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
	StepIntent       = "desired-update-intent" // journaled BEFORE desiredUpdate is set
	StepDesired      = "desired-update"        // journaled AFTER
	StepControlPlane = "control-plane"
	StepCanaryDone   = "canary-done"
	StepSoak         = "soak"
	StepUnpause      = "unpause"
	StepWorkers      = "workers"
	StepClose        = "close"
	StepAfterPlans   = "install-plans-after" // those it puts after the hop
)

// CanaryLabel is the node role label that puts a node into the canary pool.
const CanaryLabel = "node-role.kubernetes.io/worker-canary"

// RunOptions are one hop's run.
type RunOptions struct {
	Hop Hop
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
	Mirror     []*unstructured.Unstructured
	Acks       []string
	Soak       time.Duration
	Thresholds Thresholds
	Poll       time.Duration
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
	// Crash, when set, is called after each cluster write and before its journal record, with
	// the step: a test returns an error there to play a kill between the two.
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
		fs, err := Preflight(ctx, c, v, PreflightOptions{CanaryPool: o.CanaryPool, Paused: r.pausedByUs(), Acks: o.Acks})
		if err != nil {
			return res, err
		}
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
		{StepInstallPlans, func(ctx context.Context) (any, error) { return ApproveInstallPlans(ctx, r.c, r.o.Hop.CSVs(true)) }},
		{StepCanary, r.canary},
		{StepPause, r.pause},
		{StepDesired, r.desired},
		{StepControlPlane, r.controlPlane},
		{StepCanaryDone, r.canaryDone},
		{StepSoak, r.soak},
		{StepUnpause, r.unpause},
		{StepWorkers, r.workers},
		{StepClose, r.close},
		{StepAfterPlans, func(ctx context.Context) (any, error) { return ApproveInstallPlans(ctx, r.c, r.o.Hop.CSVs(false)) }},
	}
	for _, s := range steps {
		if r.j.Done(r.key(s.name), nil) {
			continue
		}
		r.say("%s: %s", res.Hop, s.name)
		data, err := s.do(ctx)
		if err != nil {
			res.Paused = r.pausedByUs()
			return res, err
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

// mirrorKinds are what the mirror-config step applies.
var mirrorKinds = map[string]bool{"ImageDigestMirrorSet": true, "ImageTagMirrorSet": true, "CatalogSource": true}

func (r *runner) mirror(ctx context.Context) (any, error) {
	for _, o := range r.o.Mirror {
		if !mirrorKinds[o.GetKind()] {
			return nil, fmt.Errorf("mirror config: %s %s is not an ImageDigestMirrorSet, ImageTagMirrorSet or CatalogSource", o.GetKind(), o.GetName())
		}
	}
	res, err := r.c.Apply(ctx, r.o.Mirror, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("apply the hop's mirror config (IDMS/ITMS/CatalogSources): %w", err)
	}
	return res, r.crash(StepMirror)
}

func (r *runner) signatures(ctx context.Context) (any, error) {
	res, err := r.c.Apply(ctx, r.o.Signatures, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("apply signature ConfigMaps: %w", err)
	}
	return res, r.crash(StepSignatures)
}

// canary creates the canary pool (the worker configs and its own role, one node) and labels
// the canary node into it, as the documented canary rollout does.
func (r *runner) canary(ctx context.Context) (any, error) {
	v, err := ReadView(ctx, r.c, r.o.Now())
	if err != nil {
		return nil, err
	}
	node := r.o.Canary
	if node == "" {
		for _, n := range v.Nodes {
			if _, ok := n.Labels["node-role.kubernetes.io/worker"]; ok {
				if _, master := n.Labels["node-role.kubernetes.io/master"]; !master {
					node = n.Name
					break
				}
			}
		}
	}
	if node == "" {
		return map[string]string{"skipped": "no worker node: the control plane is the only pool"}, nil
	}
	role := strings.TrimPrefix(CanaryLabel, "node-role.kubernetes.io/")
	pool := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigPool",
		"metadata": map[string]any{"name": r.o.CanaryPool, "labels": map[string]any{"bootstrap.dev/canary": "true"}},
		"spec": map[string]any{
			"machineConfigSelector": map[string]any{"matchExpressions": []any{map[string]any{
				"key": "machineconfiguration.openshift.io/role", "operator": "In", "values": []any{"worker", role}}}},
			"nodeSelector": map[string]any{"matchLabels": map[string]any{CanaryLabel: ""}},
		},
	}}
	if _, err := r.c.Apply(ctx, []*unstructured.Unstructured{pool}, nil, nil); err != nil {
		return nil, fmt.Errorf("create the canary pool: %w", err)
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{CanaryLabel: ""}}})
	if _, err := r.c.Patch(ctx, cluster.Ref{APIVersion: "v1", Kind: "Node", Name: node}, patch); err != nil {
		return nil, fmt.Errorf("label the canary node %s: %w", node, err)
	}
	var before string
	for _, n := range v.Nodes {
		if n.Name == node {
			before = n.OSImage
		}
	}
	return map[string]string{"pool": r.o.CanaryPool, "node": node, "osImage": before}, r.crash(StepCanary)
}

// pause pauses every pool but master and the canary's.
func (r *runner) pause(ctx context.Context) (any, error) {
	v, err := ReadView(ctx, r.c, r.o.Now())
	if err != nil {
		return nil, err
	}
	var pools []string
	for _, p := range v.Pools {
		if p.Name == "master" || p.Name == r.o.CanaryPool {
			continue
		}
		if err := r.setPaused(ctx, p.Name, true); err != nil {
			return nil, err
		}
		pools = append(pools, p.Name)
	}
	sort.Strings(pools)
	return map[string]any{"pools": pools}, r.crash(StepPause)
}

func (r *runner) setPaused(ctx context.Context, pool string, paused bool) error {
	patch := []byte(fmt.Sprintf(`{"spec":{"paused":%t}}`, paused))
	_, err := r.c.Patch(ctx, cluster.Ref{APIVersion: "machineconfiguration.openshift.io/v1", Kind: "MachineConfigPool", Name: pool}, patch)
	if err != nil {
		return fmt.Errorf("set MachineConfigPool/%s paused=%t: %w", pool, paused, err)
	}
	return nil
}

// desired sets spec.desiredUpdate to the hop's version and image by digest, never force. The
// intent is journaled first; the cluster is read first: a ClusterVersion already asking for
// this release (a run killed after the write, before its record) is not written again.
func (r *runner) desired(ctx context.Context) (any, error) {
	want := DesiredUpdate{Version: r.o.Hop.To, Image: r.o.Hop.Payload}
	v, err := ReadView(ctx, r.c, r.o.Now())
	if err != nil {
		return nil, err
	}
	if v.CV.Desired.Image == want.Image {
		return map[string]any{"desiredUpdate": want, "written": false, "found": "ClusterVersion spec.desiredUpdate already names the release: not set twice"}, nil
	}
	if err := r.j.Record(r.key(StepIntent), map[string]any{"desiredUpdate": want, "was": v.CV.Desired}); err != nil {
		return nil, err
	}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"desiredUpdate": map[string]any{
		"version": want.Version, "image": want.Image, "force": false}}})
	if _, err := r.c.Patch(ctx, ClusterVersionRef, patch); err != nil {
		return nil, fmt.Errorf("set ClusterVersion spec.desiredUpdate: %w", err)
	}
	return map[string]any{"desiredUpdate": want, "written": true}, r.crash(StepDesired)
}
