package pipeline

import (
	"errors"
	"testing"
)

// TestResumeReason pins the resume rule Run and Plan share: skip only a stage whose last entry
// succeeded with the same input fingerprint and whose Verify holds; verify runs only then.
func TestResumeReason(t *testing.T) {
	ok := StageStatus{State: StateSucceeded, SucceededFingerprint: "fp1"}
	fails := func() error { return errors.New("media ejected") }
	holds := func() error { return nil }
	for _, c := range []struct {
		name      string
		prev      StageStatus
		fp        string
		replay    bool
		always    bool
		stale     string
		verify    func() error
		want      string
		verified  bool // verify was called
		wantStale bool
	}{
		{name: "finished, same inputs, no verify", prev: ok, fp: "fp1"},
		{name: "finished, same inputs, verify holds", prev: ok, fp: "fp1", verify: holds, verified: true},
		{name: "verify fails", prev: ok, fp: "fp1", verify: fails, want: "verify: media ejected", verified: true},
		{name: "replay", prev: ok, fp: "fp1", replay: true, verify: holds, want: "replay requested"},
		{name: "always runner", prev: ok, fp: "fp1", always: true, want: "runs on every pass (read-only)"},
		{name: "never run", prev: StageStatus{State: StatePending}, fp: "fp1", want: "first run", wantStale: true},
		{name: "failed last", prev: StageStatus{State: StateFailed, SucceededFingerprint: "fp1"}, fp: "fp1", want: "last attempt failed"},
		{name: "stale", prev: StageStatus{State: StateStale, SucceededFingerprint: "fp1"}, fp: "fp1", want: "last attempt stale"},
		{name: "inputs changed", prev: ok, fp: "fp2", verify: holds, want: "inputs changed since it last succeeded", wantStale: true},
		{name: "an earlier stage will run", prev: ok, fp: "fp1", stale: "stale: mirror runs with new inputs", verify: holds,
			want: "stale: mirror runs with new inputs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			called := false
			var verify func() error
			if c.verify != nil {
				verify = func() error { called = true; return c.verify() }
			}
			got, verr := resumeReason(c.prev, c.fp, c.replay, c.always, c.stale, verify)
			if got != c.want || called != c.verified || (verr != nil) != (c.verify != nil && c.verify() != nil && c.verified) {
				t.Errorf("resumeReason = %q (verify called %t, err %v); want %q (verify called %t)", got, called, verr, c.want, c.verified)
			}
			if s := staleLater(c.prev, c.fp, c.always); s != c.wantStale {
				t.Errorf("staleLater = %t, want %t", s, c.wantStale)
			}
		})
	}
}
