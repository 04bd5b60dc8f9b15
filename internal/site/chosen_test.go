package site

import (
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

// TestChosen: the values SetDefaults filled in are named, those the profile writes are not.
func TestChosen(t *testing.T) {
	s := loadValid(t)
	got := map[string]string{}
	for _, c := range s.Chosen() {
		got[c.Path] = c.String()
	}
	for path, want := range map[string]string{
		"cluster.networking.clusterNetwork": "10.128.0.0/14 hostPrefix 23 (the machine network's address families)",
		"cluster.networking.serviceNetwork": "172.30.0.0/16",
		"cluster.networking.networkType":    "OVNKubernetes",
		"cluster.platform":                  "baremetal (3 control-plane nodes",
		"day1.moduleBlacklist[0]":           "irdma on pools worker",
		"gitops.revision":                   "HEAD",
	} {
		if !strings.Contains(got[path], want) {
			t.Errorf("%s: got %q, want it to contain %q", path, got[path], want)
		}
	}
	for _, path := range []string{"cluster.name", "gitops.repoURL", "cluster.networking.machineNetwork", "day1.extraManifestsDir"} {
		if g, ok := got[path]; ok {
			t.Errorf("%s is written in the profile, yet named as chosen: %s", path, g)
		}
	}
	// A written value is not the tool's choice.
	s.pos["cluster.networking.serviceNetwork"] = finding.Position{Line: 1}
	for _, c := range s.Chosen() {
		if c.Path == "cluster.networking.serviceNetwork" {
			t.Errorf("written serviceNetwork named as chosen: %s", c)
		}
	}
	if (&Site{}).Chosen() != nil {
		t.Error("a Site built in Go has no document to compare with")
	}
}
