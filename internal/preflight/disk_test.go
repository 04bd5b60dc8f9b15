package preflight

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

func TestDisk(t *testing.T) {
	dir := t.TempDir()
	got := runChecks(t, diskChecks(testSite(), Options{WorkDir: dir, MinFreeBytes: 1}.withDefaults()))
	wantStatus(t, got, "disk work dir", finding.Pass)

	got = runChecks(t, diskChecks(testSite(), Options{WorkDir: dir, MinFreeBytes: 1 << 60}.withDefaults()))
	r := wantStatus(t, got, "disk work dir", finding.Fail)
	if !strings.Contains(r.Message, "1.0 EiB needed") {
		t.Errorf("message %q should state the need", r.Message)
	}

	// A work dir that does not exist yet is measured at its nearest existing parent.
	later := filepath.Join(dir, "a", "b", ".bootstrap")
	got = runChecks(t, diskChecks(testSite(), Options{WorkDir: later, MinFreeBytes: 1}.withDefaults()))
	r = wantStatus(t, got, "disk work dir", finding.Pass)
	if !strings.Contains(r.Message, " at "+dir+",") {
		t.Errorf("message %q should name %s", r.Message, dir)
	}
}
