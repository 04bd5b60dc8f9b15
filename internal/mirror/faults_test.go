package mirror

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

// TestCopyThroughFaults mirrors through 5xx bursts, connections cut in the middle of blobs and a
// slow link; one image is permanently broken. Everything else must arrive with correct digests
// and the broken image must be the only one listed. A request meets at most two faults in a row,
// so five retries must carry every healthy image through (without the bound, a blob whose retries
// keep landing on the fault counters' slots fails now and then: that is the fault schedule, not
// the copy engine).
func TestCopyThroughFaults(t *testing.T) {
	f := &mirrortest.Faults{Every5xx: 5, ResetEvery: 3, Delay: 2 * time.Millisecond, FailPath: "/ocp/app-b/manifests/", MaxInARow: 2}
	f.Off.Store(true)
	e := newEnv(t, f.Wrap)
	refs, err := e.b.Sample(ctx(t), e.src.Host, 32)
	if err != nil {
		t.Fatal(err)
	}
	f.Off.Store(false)
	images, _ := Images(refs, KindAdditional, "", e.dst.Host, "")
	o := e.opts()
	o.Retries = 5
	res, err := Copy(ctx(t), images, o)
	var fe *FailedError
	if !errors.As(err, &fe) {
		t.Fatalf("want *FailedError for the broken image, got %v", err)
	}
	if len(fe.Failed) != 1 || !strings.Contains(fe.Failed[0].Source, "/ocp/app-b:") {
		t.Fatalf("failed %+v, want only ocp/app-b", fe.Failed)
	}
	if f.Injected5xx.Load() == 0 || f.InjectedResets.Load() == 0 {
		t.Fatalf("faults not exercised: 5xx %d, resets %d", f.Injected5xx.Load(), f.InjectedResets.Load())
	}
	f.Off.Store(true)
	verifySucceeded(t, res, o, len(refs)-1)
	t.Logf("injected %d 5xx, %d resets, %d permanent", f.Injected5xx.Load(), f.InjectedResets.Load(), f.InjectedPermanent.Load())
}
