package site_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
	"github.com/bootstrap-dev/bootstrap/profiles"
)

// loadProfile writes an example profile (edited by edit) and validates it as the CLI does.
func loadProfile(t *testing.T, name string, edit func(string) string) finding.List {
	t.Helper()
	data, err := profiles.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "site.yaml")
	if err := os.WriteFile(file, []byte(edit(string(data))), 0o644); err != nil {
		t.Fatal(err)
	}
	_, ps, err := site.LoadValidated(file, site.MissingFilesAsWarnings(), site.RefusePlaceholders(),
		site.WithLookupEnv(func(string) (string, bool) { return "set-in-test", true }))
	if err != nil && ps == nil {
		ps, _ = site.AsProblems(err)
	}
	return ps
}

func errorsOf(ps finding.List) map[string]string {
	out := map[string]string{}
	for _, p := range ps {
		if p.Status == finding.Fail {
			out[p.Path] = p.Message
		}
	}
	return out
}

// The example profiles' placeholders are refused until edited; the lab's loopback registry is not.
func TestPlaceholdersRefused(t *testing.T) {
	same := func(s string) string { return s }
	errs := errorsOf(loadProfile(t, "dell-xe7740-h200", same))
	for path, want := range map[string]string{
		"cluster.release.image": "all-zero digest is a placeholder",
		"registry.host":         "quay.ai.example.com:8443 is an example domain",
	} {
		if !strings.Contains(errs[path], want) {
			t.Errorf("%s: got %q, want %q (all errors: %v)", path, errs[path], want, errs)
		}
	}
	errs = errorsOf(loadProfile(t, "lab", func(s string) string {
		return strings.Replace(s, "namespace: lab", "namespace: changeme", 1)
	}))
	if len(errs) != 1 || !strings.Contains(errs["registry.namespace"], `"changeme" is a placeholder`) {
		t.Errorf("lab profile with a changeme: errors %v, want only registry.namespace", errs)
	}
	if errs := errorsOf(loadProfile(t, "lab", same)); len(errs) != 0 {
		t.Errorf("the lab profile is refused: %v", errs)
	}
}

// A misspelled enum value gets a "did you mean"; what it knocks on is folded under it.
func TestDidYouMeanAndKnockOn(t *testing.T) {
	ps := loadProfile(t, "lab", func(s string) string {
		s = strings.Replace(s, `address: "https://127.0.0.1:9101"}`, `address: "https://127.0.0.1:9101", vendor: del}`, 1)
		return strings.ReplaceAll(s, "role: master", "role: mastr")
	})
	var order []string
	for _, p := range ps {
		if p.Status == finding.Fail {
			order = append(order, p.Path+"|"+p.CausedBy)
		}
	}
	errs := errorsOf(ps)
	if !strings.Contains(errs["nodes[0].role"], `did you mean "master"?`) || !strings.Contains(errs["nodes[0].bmc.vendor"], `did you mean "dell"?`) {
		t.Errorf("no did-you-mean: %v", errs)
	}
	// the cause first, its knock-on errors right under it, whatever their lines
	got := strings.Join(order, " ")
	if !strings.Contains(got, "nodes[0].role| cluster.rendezvousIP|nodes[0].role nodes|nodes[0].role") &&
		!strings.Contains(got, "nodes[0].role| nodes|nodes[0].role cluster.rendezvousIP|nodes[0].role") {
		t.Errorf("knock-on errors not folded under their cause: %s", got)
	}
	var b strings.Builder
	_ = ps.Format(&b)
	if !strings.Contains(b.String(), "    ↳ which also makes ") || !strings.Contains(b.String(), "knock-on, cleared by fixing their cause") {
		t.Errorf("format:\n%s", b.String())
	}
}
