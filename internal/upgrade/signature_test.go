package upgrade_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// A signature made by another key than the cluster trusts: the simulated CVO verifies it
// (OpenPGP, the atomic container signature naming the digest) and refuses the release; the run
// stops with the CVO's message and the worker pool paused. With the right key's signature
// applied, the resumed run finishes the hop without writing desiredUpdate again.
func TestRunWrongKeySignature(t *testing.T) {
	trusted, other := upgradetest.NewSigner(t, "release key"), upgradetest.NewSigner(t, "someone else")
	l := newLabSigned(t, upgradetest.LabOptions{Version: "4.17.10", Workers: []string{"w0", "w1"}}, upgradetest.Faults{}, true, trusted.Keyring()...)
	j := &upgradetest.Journal{}
	o := l.opts(t)
	o.Signatures = signedBy(t, "4.18.5", func(d string) []byte { return other.Sign(t, d) })
	_, err := upgrade.Run(context.Background(), l.c, j, o)
	var trip *upgrade.Trip
	if !errors.As(err, &trip) || trip.Kind != upgrade.TripReleaseRejected || !strings.Contains(trip.Sentence(), "cannot be verified") {
		t.Fatalf("want the release refused, got %v", err)
	}
	t.Logf("wrong key: %s", trip.Sentence())
	if p, _, _ := unstructured.NestedBool(l.get(t, "pool", "worker").Object, "spec", "paused"); !p {
		t.Error("the worker pool was unpaused")
	}
	if _, err := l.c.Apply(context.Background(), signedBy(t, "4.18.5", func(d string) []byte { return trusted.Sign(t, d) }), nil, nil); err != nil {
		t.Fatal(err)
	}
	// the CVO tries the payload again on its own; resume once it has accepted the release
	deadline := time.Now().Add(20 * time.Second)
	for accepted(t, l) != "True" && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	res, err := upgrade.Run(context.Background(), l.c, j, l.opts(t))
	if err != nil || !res.Done {
		t.Fatalf("resume with the right key's signature: %v", err)
	}
	if n := l.cvPatch.Load(); n != 1 {
		t.Errorf("ClusterVersion patched %d times, want 1", n)
	}
}

func accepted(t *testing.T, l *lab) string {
	conds, _, _ := unstructured.NestedSlice(l.get(t, "cv", "").Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == "ReleaseAccepted" {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}
