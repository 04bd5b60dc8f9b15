package report

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
)

// The subscriptions step's record shows which Subscriptions moved and which were found moved.
func TestUpgradeStepDetailSubscriptions(t *testing.T) {
	raw, _ := json.Marshal(upgrade.SubscriptionMoves{Moved: []string{"ns/a: cs-x-v4-17 -> cs-x-v4-18"}, Found: []string{"ns/b: cs-x-v4-18"}})
	got := stepDetail(upgrade.StepSubscriptions, raw)
	for _, want := range []string{"moved to the next minor's CatalogSource: ns/a: cs-x-v4-17 -> cs-x-v4-18", "found already moved", "ns/b: cs-x-v4-18"} {
		if !strings.Contains(got, want) {
			t.Errorf("detail %q lacks %q", got, want)
		}
	}
}

// An install-plans step's record shows the operator CSV transitions the run saw: each planned CSV
// with its Subscription, phase and time, beside the InstallPlans approved.
func TestUpgradeStepDetailOperatorsInstalled(t *testing.T) {
	at := time.Date(2026, 12, 6, 21, 30, 5, 0, time.UTC)
	raw, _ := json.Marshal(upgrade.OperatorUpdates{
		InstallPlans: upgrade.InstallPlans{Approved: []string{"nvidia-gpu-operator/install-abc: gpu-operator-certified.v25.10.0"}},
		Installed:    []upgrade.CSVSeen{{CSV: "gpu-operator-certified.v25.10.0", Subscription: "nvidia-gpu-operator/gpu-operator-certified", Phase: "Succeeded", At: at}},
	})
	got := stepDetail(upgrade.StepAfterPlans, raw)
	for _, want := range []string{"InstallPlans approved: nvidia-gpu-operator/install-abc: gpu-operator-certified.v25.10.0",
		"installed, as seen: gpu-operator-certified.v25.10.0 (Subscription nvidia-gpu-operator/gpu-operator-certified, Succeeded at 2026-12-06T21:30:05Z)"} {
		if !strings.Contains(got, want) {
			t.Errorf("detail %q lacks %q", got, want)
		}
	}
}
