package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/bootstrap-dev/bootstrap/internal/site"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
)

// The settings of `upgrade run` that the site profile's upgrade section may give (-f site.yaml):
// a flag set on the command line wins, then the profile, then the default. Their flags are read
// back from the command's flag set, so a command may have only some of them.
const (
	flagSoak           = "soak"
	flagMaxUnavailable = "max-unavailable"
	flagCanary         = "canary"
	flagCanaryPool     = "canary-pool"
)

// defaultSoak is site.DefaultUpgradeSoak as a duration.
func defaultSoak() time.Duration {
	d, err := time.ParseDuration(site.DefaultUpgradeSoak)
	if err != nil {
		panic("site.DefaultUpgradeSoak is not a duration: " + err.Error()) // a programming error, caught by every test
	}
	return d
}

// addSettingFlags adds the four settings' flags (upgrade run).
func addSettingFlags(fs *pflag.FlagSet) {
	fs.Duration(flagSoak, defaultSoak(), "how long the updated canary runs before the other pools are unpaused (overrides the profile's upgrade.soak)")
	fs.String(flagMaxUnavailable, "", "how many nodes of each pool unpaused after the soak may update at once: a count, or a percent of the pool (rounded down, at least 1), as MachineConfigPool.spec.maxUnavailable takes it (overrides the profile's upgrade.maxUnavailable; default: each pool's own, 1 unless set)")
	fs.String(flagCanary, "", "the worker node to update first (overrides the profile's upgrade.canary; default: the first worker by name)")
	addCanaryPoolFlag(fs)
}

// addCanaryPoolFlag adds --canary-pool alone (upgrade preflight).
func addCanaryPoolFlag(fs *pflag.FlagSet) {
	fs.String(flagCanaryPool, site.DefaultCanaryPool, "the MachineConfigPool made to hold the canary (overrides the profile's upgrade.canaryPool)")
}

// runSettings loads the profile when -f names one (validated as every command does: exit 3 when
// invalid) and resolves the settings into o; print shows them, each with its source, on stderr.
func runSettings(cmd *cobra.Command, g *globals, o *upgrade.RunOptions, print bool) ([]upgrade.Setting, error) {
	var s *site.Site
	if g.file != "" {
		var err error
		if s, err = g.loadSite(); err != nil {
			return nil, err
		}
	}
	ss, err := resolveSettings(cmd.Flags(), s, o)
	if err != nil {
		return nil, err
	}
	if print {
		fmt.Fprintln(g.stderr, settingsLine(ss))
	}
	return ss, nil
}

// resolveSettings sets o's Soak, MaxUnavailable, Canary and CanaryPool from the flags set in fs,
// the profile s (nil without -f) and the defaults, and returns each value with where it came
// from, for the journal. A flag's bad value is a usage error naming it; the profile's were
// validated on load. A flag fs does not have counts as not set.
func resolveSettings(fs *pflag.FlagSet, s *site.Site, o *upgrade.RunOptions) ([]upgrade.Setting, error) {
	var u site.Upgrade
	if s != nil {
		u = s.Upgrade
	}
	// pick is the flag's value when it is set, else the profile's when it writes one, else def.
	pick := func(flag, field, fromProfile, def string) upgrade.Setting {
		name := strings.TrimPrefix(field, "upgrade.")
		if f := fs.Lookup(flag); f != nil && f.Changed {
			return upgrade.Setting{Name: name, Value: f.Value.String(), Source: upgrade.SourceFlag + " --" + flag}
		}
		if s != nil {
			if pos, ok := s.WrittenAt(field); ok {
				pos.File = s.File // absolute: the journal outlives the shell it was run from
				return upgrade.Setting{Name: name, Value: fromProfile, Source: upgrade.SourceProfile + " " + pos.String()}
			}
		}
		return upgrade.Setting{Name: name, Value: def, Source: upgrade.SourceDefault}
	}
	soak := pick(flagSoak, "upgrade.soak", u.Soak, site.DefaultUpgradeSoak)
	d, err := time.ParseDuration(soak.Value)
	if err != nil || d < 0 {
		return nil, usageError{fmt.Errorf("%s: soak %q is not a duration: write one such as 30m", soak.Source, soak.Value)}
	}
	mu := pick(flagMaxUnavailable, "upgrade.maxUnavailable", u.MaxUnavailable, "")
	mx, err := parseMaxUnavailable(mu.Value)
	if err != nil {
		return nil, usageError{fmt.Errorf("%s: %w", mu.Source, err)}
	}
	canary := pick(flagCanary, "upgrade.canary", u.Canary, "")
	pool := pick(flagCanaryPool, "upgrade.canaryPool", u.CanaryPool, site.DefaultCanaryPool)
	if pool.Value == "" {
		return nil, usageError{fmt.Errorf("%s: the canary pool needs a name, e.g. %s", pool.Source, site.DefaultCanaryPool)}
	}
	o.Soak, o.MaxUnavailable, o.Canary, o.CanaryPool = d, mx, canary.Value, pool.Value
	if mu.Value == "" {
		mu.Value = "each pool's own"
	}
	if canary.Value == "" {
		canary.Value = "the first worker by name"
	}
	return []upgrade.Setting{soak, mu, canary, pool}, nil
}

// parseMaxUnavailable reads a maxUnavailable (site.ParseMaxUnavailable, the one reading of it)
// into the MachineConfigPool field's type; empty leaves each pool's own value (nil).
func parseMaxUnavailable(s string) (*intstr.IntOrString, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	m, err := site.ParseMaxUnavailable(s)
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, site.MaxUnavailableRemedy)
	}
	v := intstr.FromInt32(int32(m.N))
	if m.Percent {
		v = intstr.FromString(m.String())
	}
	return &v, nil
}

// settingsLine is the settings for people: "soak 1h0m0s (profile site.yaml:88:9), ...".
func settingsLine(ss []upgrade.Setting) string {
	var parts []string
	for _, s := range ss {
		parts = append(parts, fmt.Sprintf("%s %s (%s)", s.Name, s.Value, s.Source))
	}
	return "settings: " + strings.Join(parts, "; ")
}
