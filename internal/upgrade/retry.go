package upgrade

import (
	"errors"
	"fmt"
	"time"
)

// StepTrip is the record of the trip a hop last stopped on ("<to>/trip"): its kind, object,
// condition time and the release asked for, so a resumed run knows a condition it already
// stopped on from a new one.
const StepTrip = "trip"

// tripRecord is a journaled trip.
type tripRecord struct {
	Kind     string    `json:"kind"`
	Object   string    `json:"object"`
	Since    time.Time `json:"since,omitempty"`
	Image    string    `json:"image,omitempty"`
	Sentence string    `json:"sentence"`
}

// tripped journals err when it is a trip, and returns it.
func (r *runner) tripped(err error) error {
	var t *Trip
	if !errors.As(err, &t) {
		return err
	}
	rec := tripRecord{Kind: t.Kind, Object: t.Object, Since: t.Since.UTC(), Image: t.Image, Sentence: t.Sentence()}
	if jerr := r.j.Record(r.key(StepTrip), rec); jerr != nil {
		return fmt.Errorf("%w (and journaling the trip failed: %v)", err, jerr)
	}
	return err
}

// again takes a ReleaseAccepted=False the hop already stopped on (same release asked for, same
// lastTransitionTime as journaled with the trip) for what it is: the CVO's old verdict, which
// it keeps until it retries the release on its own (Thresholds.ReleaseRetry). Until then the
// run says so and waits; a release accepted meanwhile lets the hop go on; a verdict unchanged
// after the wait stops the hop again, saying that nothing changed. Any other trip is returned
// as it is.
func (w *watcher) again(t *Trip, v *View) *Trip {
	if t.Kind != TripReleaseRejected {
		return t
	}
	if w.prior == nil {
		w.prior = &tripRecord{}
		w.r.j.Done(w.r.key(StepTrip), w.prior)
	}
	p := w.prior
	if p.Kind != t.Kind || p.Image != t.Image || t.Since.IsZero() || !p.Since.Equal(t.Since.UTC()) {
		return t
	}
	retry := w.r.o.Thresholds.ReleaseRetry
	if w.priorSeen.IsZero() {
		w.priorSeen = v.At
		w.r.say("%s: ClusterVersion still shows the refusal this hop stopped on (ReleaseAccepted=False since %s): the CVO keeps it until it retries the release on its own (within 4 minutes of a failure); waiting up to %s for it",
			w.r.o.Hop.To, t.Since.UTC().Format(time.RFC3339), retry)
	}
	waited := v.At.Sub(w.priorSeen)
	if waited < retry {
		return nil
	}
	return &Trip{Kind: t.Kind, Object: t.Object, Since: t.Since, Image: t.Image,
		Cause: fmt.Sprintf("still %s, unchanged since the hop stopped on it at %s: the CVO had %s to retry the release and did not accept it", t.Cause, t.Since.UTC().Format(time.RFC3339), round(waited)),
		Fix:   "nothing the message names has been fixed yet: " + t.Fix + " (after a fix the CVO takes up to 4 minutes to retry; resuming waits for it)"}
}
