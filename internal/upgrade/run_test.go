package upgrade_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/openpgp" //nolint:staticcheck // the simulated CVO's keyring
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// factor compresses the lab's clock: the product's thresholds (40 minutes degraded, an hour of
// failed drain) pass in 2-3 real seconds.
const factor = 1200

type lab struct {
	d       dynamic.Interface
	c       *cluster.Client
	clock   *upgradetest.Clock
	cvPatch *atomic.Int32

	mu sync.Mutex
	// writes counts the changes our client made, by "Ref action" (an apply that left the object
	// as it was is none).
	writes map[string]int
}

func newLab(t *testing.T, lo upgradetest.LabOptions, f upgradetest.Faults) *lab {
	t.Helper()
	return newLabSigned(t, lo, f, false)
}

func newLabSigned(t *testing.T, lo upgradetest.LabOptions, f upgradetest.Faults, signed bool, keyring ...*openpgp.Entity) *lab {
	t.Helper()
	return newLabSim(t, lo, &upgradetest.Sim{Faults: f, RequireSignatures: signed, Keyring: keyring})
}

// newLabSim is the lab with sim (its D and Clock filled in) playing the operators.
func newLabSim(t *testing.T, lo upgradetest.LabOptions, sim *upgradetest.Sim) *lab {
	t.Helper()
	cfg := server.Config(t)
	l := &lab{d: clustertest.Dynamic(t, cfg), clock: &upgradetest.Clock{Factor: factor}, cvPatch: &atomic.Int32{}, writes: map[string]int{}}
	upgradetest.Lab(t, l.d, lo, l.clock)
	var err error
	l.c, err = cluster.New(cfg, cluster.WithChangeHook(func(a cluster.Applied) {
		if a.Kind == "ClusterVersion" && a.Action == cluster.Patched {
			l.cvPatch.Add(1)
		}
		if a.Action != cluster.Unchanged {
			l.mu.Lock()
			l.writes[a.Ref.String()+" "+string(a.Action)]++
			l.mu.Unlock()
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	sim.D, sim.Clock = l.d, l.clock
	sim.Start(t)
	sim.Settle(t)
	return l
}

func (l *lab) opts(t *testing.T) upgrade.RunOptions {
	return upgrade.RunOptions{
		Hop:        upgrade.Hop{From: "4.17.10", To: "4.18.5", Payload: upgradetest.Payload("4.18.5")},
		AcceptedBy: "Jane Doe", Canary: "w0", Soak: 10 * time.Minute, Poll: 25 * time.Millisecond, NoBackup: "the lab has no etcd", Blacklist: []string{"irdma"},
		Now: l.clock.Now, Progress: func(s string) { t.Log(s) },
	}
}

func (l *lab) get(t *testing.T, gvr any, name string) *unstructured.Unstructured {
	t.Helper()
	var u *unstructured.Unstructured
	var err error
	switch gvr {
	case "node":
		u, err = l.d.Resource(clustertest.Nodes).Get(context.Background(), name, metav1.GetOptions{})
	case "pool":
		u, err = l.d.Resource(clustertest.MachineConfigPools).Get(context.Background(), name, metav1.GetOptions{})
	default:
		u, err = l.d.Resource(clustertest.ClusterVersions).Get(context.Background(), "version", metav1.GetOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func (l *lab) current(t *testing.T, node string) string {
	return l.get(t, "node", node).GetAnnotations()[upgrade.AnnCurrentConfig]
}

// One minor hop end to end: contract journaled, canary first while the other workers stay
// paused through the soak, then the rest, then the canary pool removed.
func TestRunOneHopCanaryFirst(t *testing.T) {
	l := newLab(t, upgradetest.LabOptions{Version: "4.17.10"}, upgradetest.Faults{})
	j := &upgradetest.Journal{}
	o := l.opts(t)
	var othersAtUnpause []string
	o.Crash = func(step string) error {
		if step == upgrade.StepUnpause {
			othersAtUnpause = []string{l.current(t, "w1"), l.current(t, "w2"), l.current(t, "w0")}
		}
		return nil
	}
	start := time.Now()
	res, err := upgrade.Run(context.Background(), l.c, j, o)
	if err != nil {
		t.Fatalf("run: %v (journal %v)", err, j.Keys)
	}
	t.Logf("hop took %s real, %d steps", time.Since(start).Round(time.Millisecond), len(j.Keys))
	if !res.Done {
		t.Fatal("not done")
	}
	want := []string{"contract", "etcd-backup", "signatures", "mirror-config", "install-plans", "subscriptions", "canary-pool", "pause", "health-checks-pause", "desired-update-intent", "desired-update", "control-plane",
		"canary-done", "soak", "unpause", "workers", "close", "etcd-backup-after", "install-plans-after"}
	var keys []string // the node transitions, journaled as seen, left out
	for _, k := range j.Keys {
		if !strings.Contains(k, "/"+upgrade.StepNodes+"/") {
			keys = append(keys, k)
		}
	}
	if got := strings.Join(keys, " "); got != "4.18.5/"+strings.Join(want, " 4.18.5/") {
		t.Errorf("journal order:\n got %s\nwant %v", got, want)
	}
	old := upgradetest.Rendered("worker", "4.17.10")
	if othersAtUnpause == nil || othersAtUnpause[0] != old || othersAtUnpause[1] != old || othersAtUnpause[2] != upgradetest.Rendered("worker-canary", "4.18.5") {
		t.Errorf("when the rest was unpaused, w1/w2/w0 ran %v: the canary alone should have been updated", othersAtUnpause)
	}
	for _, n := range []string{"m0", "w0", "w1", "w2"} {
		if cur := l.current(t, n); !strings.HasSuffix(cur, "-4.18.5") {
			t.Errorf("node %s runs %s after the hop", n, cur)
		}
	}
	if _, has := l.get(t, "node", "w0").GetLabels()[upgrade.CanaryLabel]; has {
		t.Error("the canary label is still on w0")
	}
	if _, err := l.d.Resource(clustertest.MachineConfigPools).Get(context.Background(), "worker-canary", metav1.GetOptions{}); err == nil {
		t.Error("the canary pool was not removed")
	}
	if p, _, _ := unstructured.NestedBool(l.get(t, "pool", "worker").Object, "spec", "paused"); p {
		t.Error("the worker pool is still paused")
	}
	cv := l.get(t, "cv", "")
	if f, _, _ := unstructured.NestedBool(cv.Object, "spec", "desiredUpdate", "force"); f {
		t.Error("force was set")
	}
	if img, _, _ := unstructured.NestedString(cv.Object, "spec", "desiredUpdate", "image"); img != upgradetest.Payload("4.18.5") {
		t.Errorf("desiredUpdate.image %q, want the payload by digest", img)
	}
	if n := l.cvPatch.Load(); n != 1 {
		t.Errorf("ClusterVersion patched %d times, want 1", n)
	}
	// A second run finds every step journaled and writes nothing.
	n := len(j.Keys)
	if _, err := upgrade.Run(context.Background(), l.c, j, l.opts(t)); err != nil || l.cvPatch.Load() != 1 || len(j.Keys) != n {
		t.Errorf("re-run: err %v, %d CV patches, %d journal records", err, l.cvPatch.Load(), len(j.Keys))
	}
}

var errKilled = errors.New("killed")

// A kill after desiredUpdate is written and before it is journaled: the resumed run reads the
// ClusterVersion, finds the release asked for, journals it without writing it again.
func TestRunKillBetweenDesiredUpdateAndJournal(t *testing.T) {
	l := newLabSigned(t, upgradetest.LabOptions{Version: "4.17.10", Workers: []string{"w0", "w1"}}, upgradetest.Faults{}, true)
	j := &upgradetest.Journal{}
	o := l.opts(t)
	o.Signatures = signatures(t, "4.18.5")
	o.Crash = func(step string) error {
		if step == upgrade.StepDesired {
			return errKilled
		}
		return nil
	}
	if _, err := upgrade.Run(context.Background(), l.c, j, o); !errors.Is(err, errKilled) {
		t.Fatalf("first run: %v, want the kill", err)
	}
	if !j.Done("4.18.5/"+upgrade.StepIntent, nil) || j.Done("4.18.5/"+upgrade.StepDesired, nil) {
		t.Fatalf("after the kill the journal should hold the intent only: %v", j.Keys)
	}
	o = l.opts(t)
	o.Signatures = signatures(t, "4.18.5")
	res, err := upgrade.Run(context.Background(), l.c, j, o)
	if err != nil || !res.Done {
		t.Fatalf("resume: %v", err)
	}
	if n := l.cvPatch.Load(); n != 1 {
		t.Errorf("ClusterVersion spec.desiredUpdate written %d times, want once", n)
	}
	var rec struct {
		Written bool
		Found   string
	}
	j.Done("4.18.5/"+upgrade.StepDesired, &rec)
	if rec.Written || !strings.Contains(rec.Found, "not set twice") {
		t.Errorf("the resumed record should say it found the write: %+v", rec)
	}
}

func poolRef(name string) cluster.Ref {
	return cluster.Ref{APIVersion: "machineconfiguration.openshift.io/v1", Kind: "MachineConfigPool", Name: name}
}

// signatures are the release's signature ConfigMap as the mirror writes it.
func signatures(t *testing.T, version string) []*unstructured.Unstructured {
	return signedBy(t, version, func(string) []byte { return []byte("throwaway signature") })
}

// signedBy is the signature ConfigMap holding sign(digest).
func signedBy(t *testing.T, version string, sign func(digest string) []byte) []*unstructured.Unstructured {
	t.Helper()
	dir := t.TempDir()
	p := upgradetest.Payload(version)
	d := p[strings.LastIndex(p, "@")+1:]
	fs, err := mirror.WriteSignatureConfigMap(dir, []mirror.ReleaseSignatures{{Digest: d, Signatures: [][]byte{sign(d)}}})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := cluster.ReadFiles(filepath.Join(dir, fs[0]))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}
