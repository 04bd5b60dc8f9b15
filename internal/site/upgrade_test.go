package site

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

// ParseMaxUnavailable is the one reading of a maxUnavailable: what MachineConfigPool
// spec.maxUnavailable takes, a count of at least 1 or a percent from 1% to 100%.
func TestParseMaxUnavailable(t *testing.T) {
	for in, want := range map[string]MaxUnavailable{"1": {N: 1}, "3": {N: 3}, " 2 ": {N: 2}, "25%": {N: 25, Percent: true},
		"100%": {N: 100, Percent: true}, "1%": {N: 1, Percent: true}} {
		if got, err := ParseMaxUnavailable(in); err != nil || got != want {
			t.Errorf("ParseMaxUnavailable(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, why := range map[string]string{"0": "less than 1", "-1": "neither", "0%": "less than 1", "101%": "more than 100%",
		"150%": "more than 100%", "half": "neither", "2.5": "neither", "%": "neither", "": "neither", "+2": "neither", "2 %": "neither"} {
		if got, err := ParseMaxUnavailable(in); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseMaxUnavailable(%q) = %v, %v; want an error saying %q", in, got, err, why)
		}
	}
	if s := (MaxUnavailable{N: 25, Percent: true}).String(); s != "25%" {
		t.Errorf("String() = %q", s)
	}
}

// Each bad value of the upgrade section is one problem at the exact line and column of the
// value (of the key, for an unknown one), naming the field, with its fix; good values are none.
func TestUpgradeSectionProblems(t *testing.T) {
	root := copyTestdata(t)
	base, err := os.ReadFile(filepath.Join(root, "valid", "site.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Count(string(base), "\n") + 2 // "upgrade:" follows the last line; the field is the next
	for _, tc := range []struct {
		field, value string
		sev          finding.Status
		col          int    // 0: no problem
		path         string // default upgrade.<field>
		msg, fix     string
	}{
		{field: "soak", value: "5 minutes", sev: finding.Fail, col: 9, msg: `"5 minutes" is not a duration`, fix: "30m or 1h30m"},
		{field: "soak", value: "-5m", sev: finding.Fail, col: 9, msg: `"-5m" is negative`, fix: "Go duration"},
		{field: "soak", value: "0s", sev: finding.Warn, col: 9, msg: "no soak", fix: "30m or more"},
		{field: "soak", value: "45m"},
		{field: "maxUnavailable", value: "0", sev: finding.Fail, col: 19, msg: `maxUnavailable "0" is less than 1`, fix: "spec.maxUnavailable"},
		{field: "maxUnavailable", value: "150%", sev: finding.Fail, col: 19, msg: `maxUnavailable "150%" is more than 100% of the pool`, fix: "from 1% to 100% (25%)"},
		{field: "maxUnavailable", value: "two", sev: finding.Fail, col: 19, msg: "neither a count of nodes nor a percent", fix: "a count of at least 1 (2)"},
		{field: "maxUnavailable", value: "2"},
		{field: "maxUnavailable", value: "25%"},
		{field: "canary", value: "cp-0", sev: finding.Fail, col: 11, msg: "cp-0 is a control-plane node", fix: "name a GPU worker of nodes: gpu-0"},
		{field: "canary", value: "gpu-9", sev: finding.Fail, col: 11, msg: `"gpu-9" is not a node of this profile; did you mean "gpu-0"?`, fix: "gpu-0"},
		{field: "canary", value: "gpu-0"},
		{field: "canaryPool", value: "worker", sev: finding.Fail, col: 15, msg: "one of the cluster's own pools", fix: "worker-canary"},
		{field: "canaryPool", value: "Canary_Pool", sev: finding.Fail, col: 15, msg: "not a Kubernetes object name", fix: "lower-case"},
		{field: "canaryPool", value: "gpu-canary"},
		// decoding: an unknown field at its key, a list where a string belongs at the list
		{field: "sok", value: "30m", sev: finding.Fail, col: 3, path: "upgrade.sok", msg: `unknown field "sok"`, fix: `"soak"`},
		{field: "canary", value: "[gpu-0]", sev: finding.Fail, col: 11, msg: "expected a string", fix: "single value"},
	} {
		t.Run(tc.field+"="+tc.value, func(t *testing.T) {
			file := filepath.Join(root, "valid", "upgrade.yaml")
			doc := string(base) + "upgrade:\n  " + tc.field + ": " + tc.value + "\n"
			if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			_, ps, err := LoadValidated(file, WithLookupEnv(testEnv))
			if p, ok := AsProblems(err); ok {
				ps = p
			} else if err != nil {
				t.Fatal(err)
			}
			if tc.col == 0 {
				if len(ps) != 0 {
					t.Errorf("problems with %s: %s:\n%v", tc.field, tc.value, ps)
				}
				return
			}
			path := tc.path
			if path == "" {
				path = "upgrade." + tc.field
			}
			if len(ps) != 1 {
				t.Fatalf("%d problems, want 1:\n%v", len(ps), ps)
			}
			p := ps[0]
			want := finding.Position{File: file, Line: line, Column: tc.col}
			if p.Position != want || p.Path != path || p.Status != tc.sev || !strings.Contains(p.Message, tc.msg) || !strings.Contains(p.Remedy, tc.fix) {
				t.Errorf("got  %s\nwant %s: %s: %s: …%s… (fix: …%s…)", p, want, tc.sev.Word(), path, tc.msg, tc.fix)
			}
		})
	}
}

// The section's defaults are named, filled only where the document is silent, and listed as
// chosen; WrittenAt gives where a written value is.
func TestUpgradeDefaults(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "site.yaml")
	doc := "apiVersion: bootstrap.openshift.io/v1alpha1\nkind: Site\nupgrade:\n  maxUnavailable: 2\n  soak: 1h\n"
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if s.Upgrade != (Upgrade{Soak: "1h", MaxUnavailable: "2", CanaryPool: DefaultCanaryPool}) {
		t.Errorf("upgrade = %+v", s.Upgrade)
	}
	if p, ok := s.WrittenAt("upgrade.soak"); !ok || p != (finding.Position{File: file, Line: 5, Column: 9}) {
		t.Errorf("WrittenAt(upgrade.soak) = %v, %v", p, ok)
	}
	if p, ok := s.WrittenAt("upgrade.canaryPool"); ok {
		t.Errorf("WrittenAt(upgrade.canaryPool) = %v: a default is not written", p)
	}
	chosen := map[string]string{}
	for _, c := range s.Chosen() {
		chosen[c.Path] = c.Value
	}
	if chosen["upgrade.canaryPool"] != DefaultCanaryPool || chosen["upgrade.soak"] != "" {
		t.Errorf("chosen: canaryPool %q (want %s), soak %q (written, not chosen)", chosen["upgrade.canaryPool"], DefaultCanaryPool, chosen["upgrade.soak"])
	}
	var bare Site
	bare.SetDefaults()
	if bare.Upgrade.Soak != DefaultUpgradeSoak || DefaultUpgradeSoak != "30m" {
		t.Errorf("default soak %q", bare.Upgrade.Soak)
	}
}
