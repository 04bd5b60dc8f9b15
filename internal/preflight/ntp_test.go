package preflight

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/e2e/lab/ntpd"
	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

func TestNTP(t *testing.T) {
	good := startNTP(t, 0)
	skewed := startNTP(t, -90*time.Second) // the jump host is 90 s ahead of this source
	unsynced := startNTP(t, 0)
	unsynced.SetLeap(ntpd.LeapNotInSync)
	gone := startNTP(t, 0)
	goneAddr := gone.Addr()
	_ = gone.Close()

	s := testSite()
	s.Cluster.NTPSources = []string{good.Addr(), skewed.Addr(), unsynced.Addr(), goneAddr}
	got := runChecks(t, ntpChecks(s, Options{}.withDefaults()))

	r := wantStatus(t, got, "ntp "+good.Addr(), finding.Pass)
	if !strings.Contains(r.Message, "stratum 2") {
		t.Errorf("good: %q", r.Message)
	}
	r = wantStatus(t, got, "ntp "+skewed.Addr(), finding.Fail)
	// The offset is measured: under load it is off by up to half the round trip.
	if !regexp.MustCompile(`1m(29|30)(\.\d+)?s ahead of`).MatchString(r.Message) || !strings.Contains(r.Remedy, "clock") {
		t.Errorf("skewed: message %q remedy %q should give the offset and how to fix the clock", r.Message, r.Remedy)
	}
	r = wantStatus(t, got, "ntp "+unsynced.Addr(), finding.Fail)
	if !strings.Contains(r.Message, "unusable") {
		t.Errorf("unsynced: %q", r.Message)
	}
	wantStatus(t, got, "ntp "+goneAddr, finding.Fail)
}

func TestNTPToleranceIsAnOption(t *testing.T) {
	src := startNTP(t, 3*time.Second)
	s := testSite()
	s.Cluster.NTPSources = []string{src.Addr()}
	got := runChecks(t, ntpChecks(s, Options{}.withDefaults()))
	wantStatus(t, got, "ntp "+src.Addr(), finding.Fail)
	got = runChecks(t, ntpChecks(s, Options{MaxClockOffset: 5 * time.Second}.withDefaults()))
	wantStatus(t, got, "ntp "+src.Addr(), finding.Pass)
}

func TestNTPNoSourcesWarns(t *testing.T) {
	got := runChecks(t, ntpChecks(testSite(), Options{}.withDefaults()))
	wantStatus(t, got, "ntp sources", finding.Warn)
}
