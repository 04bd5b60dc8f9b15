package bmc_test

import (
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/bmc/bmctest"
)

// memJournal is an in-memory Journal that round-trips through JSON like the real one.
type memJournal struct {
	mu sync.Mutex
	m  map[string][]byte
}

func newMemJournal() *memJournal { return &memJournal{m: map[string][]byte{}} }

func (j *memJournal) Done(key string, out any) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	b, ok := j.m[key]
	if ok && out != nil {
		_ = json.Unmarshal(b, out)
	}
	return ok
}

func (j *memJournal) Record(key string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.m[key] = b
	return nil
}

// fast are options that keep tests quick against the simulator's millisecond delays.
func fast() []bmc.Option {
	return []bmc.Option{
		bmc.WithRetry(4, 5*time.Millisecond),
		bmc.WithPoll(5*time.Millisecond, 5*time.Second),
		bmc.WithResumeGrace(500 * time.Millisecond),
		bmc.WithCallTimeout(10 * time.Second),
	}
}

const testMAC = "b0:7b:25:de:1a:01"

// simNode starts a simulated iDRAC and returns it with a Target that trusts its certificate.
func simNode(t testing.TB, name string, o bmctest.Options) (*bmctest.BMC, bmc.Target) {
	t.Helper()
	if o.MACs == nil {
		o.MACs = []string{testMAC, "b0:7b:25:de:1a:02"}
	}
	if o.Cert == nil {
		o.Cert = sharedCert(t)
	}
	sim := bmctest.New(o)
	t.Cleanup(sim.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := sim.WriteCA(ca); err != nil {
		t.Fatal(err)
	}
	return sim, bmc.Target{
		Node: name, Address: sim.URL(), Username: "root", CAFile: ca,
		Password: func() (string, error) { return "calvin", nil },
	}
}

// sharedCert is one certificate for all simulators of a test, so one CA file trusts the fleet.
func sharedCert(t testing.TB) *bmctest.Cert {
	certOnce.Do(func() { certVal, certErr = bmctest.NewCert() })
	if certErr != nil {
		t.Fatal(certErr)
	}
	return certVal
}

var (
	certOnce sync.Once
	certVal  *bmctest.Cert
	certErr  error
)
