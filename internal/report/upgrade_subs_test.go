package report

import (
	"encoding/json"
	"strings"
	"testing"

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
