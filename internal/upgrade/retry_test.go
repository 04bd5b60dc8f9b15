package upgrade_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// A hop stopped on ReleaseAccepted=False (no signature for the release) and resumed at once: the
// simulated CVO, like the real one, keeps its refusal (same lastTransitionTime) until it retries
// the release after a backoff. The resumed run recognises the refusal it stopped on, says it waits
// for the CVO's retry instead of stopping again at once; with the signature applied the CVO accepts
// the release on its retry and the hop completes; with nothing fixed the run stops after the wait,
// saying the refusal is unchanged since the last stop and what to do.
func TestRunResumedOnTheRefusalItStoppedOn(t *testing.T) {
	for _, tc := range []struct {
		name string
		fix  bool
	}{{"signature applied", true}, {"nothing fixed", false}} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLabSim(t, upgradetest.LabOptions{Version: "4.17.10", Workers: []string{"w0", "w1"}},
				&upgradetest.Sim{RequireSignatures: true, RetryAfter: 40 * time.Minute})
			th := upgrade.DefaultThresholds()
			th.ReleaseRetry = time.Hour // longer than the simulated CVO's retry
			j := &upgradetest.Journal{}
			o := l.opts(t)
			o.Soak, o.Thresholds = 0, th
			_, err := upgrade.Run(context.Background(), l.c, j, o)
			var first *upgrade.Trip
			if !errors.As(err, &first) || first.Kind != upgrade.TripReleaseRejected {
				t.Fatalf("first run: %v, want ReleaseAccepted=False", err)
			}
			var rec struct {
				Since time.Time
				Image string
			}
			if !j.Done("4.18.5/"+upgrade.StepTrip, &rec) || rec.Image != upgradetest.Payload("4.18.5") || !rec.Since.Equal(first.Since) {
				t.Fatalf("journaled trip %+v, want the release and the condition's time %s", rec, first.Since)
			}
			if tc.fix {
				if _, err := l.c.Apply(context.Background(), signatures(t, "4.18.5"), nil, nil); err != nil {
					t.Fatal(err)
				}
			}
			var said []string
			o = l.opts(t)
			o.Soak, o.Thresholds = 0, th
			o.Progress = func(s string) { said = append(said, s); t.Log(s) }
			start := l.clock.Now()
			res, err := upgrade.Run(context.Background(), l.c, j, o)
			waited := strings.Join(said, "\n")
			if !strings.Contains(waited, "still shows the refusal this hop stopped on") || !strings.Contains(waited, "waiting up to 1h0m0s") {
				t.Errorf("the resumed run did not say it waits for the CVO's retry:\n%s", waited)
			}
			if tc.fix {
				if err != nil || !res.Done {
					t.Fatalf("resumed after the fix: %v", err)
				}
				return
			}
			var again *upgrade.Trip
			if !errors.As(err, &again) || again.Kind != upgrade.TripReleaseRejected {
				t.Fatalf("resumed with nothing fixed: %v, want the refusal again", err)
			}
			if d := l.clock.Now().Sub(start); d < time.Hour {
				t.Errorf("stopped %s after the resume, before the CVO had its retry window", d)
			}
			for _, s := range []string{"still ReleaseAccepted=False (RetrievePayload", "unchanged since the hop stopped on it", "did not accept it"} {
				if !strings.Contains(again.Error(), s) {
					t.Errorf("sentence lacks %q: %s", s, again.Error())
				}
			}
			if !strings.Contains(again.Remedy(), "nothing the message names has been fixed yet") || !strings.Contains(again.Remedy(), "signature ConfigMap") {
				t.Errorf("remedy: %s", again.Remedy())
			}
		})
	}
}
