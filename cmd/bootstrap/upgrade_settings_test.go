package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/bootstrap-dev/bootstrap/internal/site"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
)

// TestParseMaxUnavailable: a maxUnavailable becomes the pool field's type, a count as an int and
// a percent as a string; empty leaves the pools' own value; a bad one says what is wanted.
func TestParseMaxUnavailable(t *testing.T) {
	for in, want := range map[string]intstr.IntOrString{"1": intstr.FromInt32(1), " 3 ": intstr.FromInt32(3),
		"25%": intstr.FromString("25%"), "100%": intstr.FromString("100%")} {
		if v, err := parseMaxUnavailable(in); err != nil || v == nil || *v != want {
			t.Errorf("parseMaxUnavailable(%q) = %v, %v; want %#v", in, v, err, want)
		}
	}
	if v, err := parseMaxUnavailable(""); v != nil || err != nil {
		t.Errorf("empty: %v, %v; want nil, nil", v, err)
	}
	for _, in := range []string{"0", "-1", "0%", "101%", "half", "2.5", "%"} {
		if v, err := parseMaxUnavailable(in); err == nil || !strings.Contains(err.Error(), "spec.maxUnavailable takes it") {
			t.Errorf("parseMaxUnavailable(%q) = %v, %v; want an error with the remedy", in, v, err)
		}
	}
}

// labSiteWithUpgrade writes the lab profile with section appended and returns its path and the
// line its first appended field is on.
func labSiteWithUpgrade(t *testing.T, section string) (string, int) {
	t.Helper()
	file := writeLabSite(t, t.TempDir(), "canary-settings")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	write(t, file, append(b, section...), 0o644)
	return file, strings.Count(string(b), "\n") + 2
}

// The profile's upgrade section reaches RunOptions through the real command's flags; a flag
// given on the command line overrides its field; each setting says where it came from.
func TestUpgradeRunSettingsFromProfile(t *testing.T) {
	file, line := labSiteWithUpgrade(t, "upgrade:\n  soak: 1h\n  maxUnavailable: 25%\n  canary: gpu-0\n")
	s, _, err := site.LoadValidated(file)
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(file)
	at := func(l, col int) string { return fmt.Sprintf("profile %s:%d:%d", abs, line+l, col) }
	resolve := func(args ...string) (upgrade.RunOptions, []upgrade.Setting) {
		t.Helper()
		cmd, _, err := NewRootCmd(&bytes.Buffer{}, &bytes.Buffer{}).Find([]string{"upgrade", "run"})
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		var o upgrade.RunOptions
		ss, err := resolveSettings(cmd.Flags(), s, &o)
		if err != nil {
			t.Fatal(err)
		}
		return o, ss
	}

	o, ss := resolve()
	if o.Soak != time.Hour || o.MaxUnavailable == nil || *o.MaxUnavailable != intstr.FromString("25%") || o.Canary != "gpu-0" || o.CanaryPool != site.DefaultCanaryPool {
		t.Errorf("from the profile: soak %s, maxUnavailable %v, canary %q, pool %q", o.Soak, o.MaxUnavailable, o.Canary, o.CanaryPool)
	}
	want := []upgrade.Setting{{Name: "soak", Value: "1h", Source: at(0, 9)}, {Name: "maxUnavailable", Value: "25%", Source: at(1, 19)},
		{Name: "canary", Value: "gpu-0", Source: at(2, 11)}, {Name: "canaryPool", Value: site.DefaultCanaryPool, Source: "default"}}
	if !slices.Equal(ss, want) {
		t.Errorf("sources:\n got %v\nwant %v", ss, want)
	}

	o, ss = resolve("--soak", "5m", "--max-unavailable", "2", "--canary-pool", "gpu-canary")
	if o.Soak != 5*time.Minute || o.MaxUnavailable == nil || *o.MaxUnavailable != intstr.FromInt32(2) || o.Canary != "gpu-0" || o.CanaryPool != "gpu-canary" {
		t.Errorf("flags over the profile: soak %s, maxUnavailable %v, canary %q, pool %q", o.Soak, o.MaxUnavailable, o.Canary, o.CanaryPool)
	}
	want = []upgrade.Setting{{Name: "soak", Value: "5m0s", Source: "flag --soak"}, {Name: "maxUnavailable", Value: "2", Source: "flag --max-unavailable"},
		{Name: "canary", Value: "gpu-0", Source: at(2, 11)}, {Name: "canaryPool", Value: "gpu-canary", Source: "flag --canary-pool"}}
	if !slices.Equal(ss, want) {
		t.Errorf("sources with flags:\n got %v\nwant %v", ss, want)
	}

	// a flag set to its default still overrides: the person said so
	if o, ss = resolve("--soak", "30m"); o.Soak != 30*time.Minute || ss[0].Source != "flag --soak" {
		t.Errorf("--soak 30m: %s from %s", o.Soak, ss[0].Source)
	}
}

// On the command line: the settings and their sources are printed before anything else is read
// (here the run stops at the missing --plan, the cluster untouched); a bad flag is refused naming
// the flag; a bad profile value is refused (exit 3) at its file:line:col with the field and fix.
func TestUpgradeRunSettingsOnTheCommandLine(t *testing.T) {
	file, line := labSiteWithUpgrade(t, "upgrade:\n  maxUnavailable: 2\n")
	abs, _ := filepath.Abs(file)
	code, _, errs := run(t, "--dir", t.TempDir(), "-f", file, "upgrade", "run", "--soak", "10m")
	want := fmt.Sprintf("settings: soak 10m0s (flag --soak); maxUnavailable 2 (profile %s:%d:19); canary the first worker by name (default); canaryPool %s (default)",
		abs, line, site.DefaultCanaryPool)
	if !strings.Contains(errs, want) || !strings.Contains(errs, "--plan FILE is required") || code != exitFailure {
		t.Errorf("exit %d, stderr:\n%s\nwant the line\n%s", code, errs, want)
	}
	code, _, errs = run(t, "--dir", t.TempDir(), "upgrade", "run")
	if want := "settings: soak 30m (default); maxUnavailable each pool's own (default)"; !strings.Contains(errs, want) {
		t.Errorf("without a profile: exit %d, stderr:\n%s\nwant %s", code, errs, want)
	}
	code, _, errs = run(t, "--dir", t.TempDir(), "-f", file, "upgrade", "run", "--max-unavailable", "150%")
	if code != exitFailure || !strings.Contains(errs, `flag --max-unavailable: "150%" is more than 100% of the pool`) || strings.Contains(errs, "settings:") {
		t.Errorf("--max-unavailable 150%%: exit %d, stderr:\n%s", code, errs)
	}

	bad, line := labSiteWithUpgrade(t, "upgrade:\n  soak: 5 minutes\n  canary: cp-0\n")
	code, _, errs = run(t, "--dir", t.TempDir(), "-f", bad, "upgrade", "run")
	for _, w := range []string{
		fmt.Sprintf(`%s:%d:9: error: upgrade.soak: "5 minutes" is not a duration`, bad, line),
		fmt.Sprintf(`%s:%d:11: error: upgrade.canary: cp-0 is a control-plane node`, bad, line+1),
		"fix: write a Go duration such as 30m", "fix: name a GPU worker of nodes: gpu-0",
	} {
		if !strings.Contains(errs, w) {
			t.Errorf("stderr lacks %q", w)
		}
	}
	if code != exitInvalid || strings.Contains(errs, "settings:") {
		t.Errorf("a bad profile: exit %d (want %d, before any setting is used), stderr:\n%s", code, exitInvalid, errs)
	}
}
