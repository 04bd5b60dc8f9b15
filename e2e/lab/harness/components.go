package harness

import "github.com/bootstrap-dev/bootstrap/e2e/lab/dnsd"

// Components returns the started components in start order, for tests that inspect or steer a
// stand-in (fault injection, counters).
func (l *Lab) Components() []Component { return append([]Component(nil), l.started...) }

// SetZone replaces the records the lab DNS answers (tests that add a node to the profile).
func (d *DNS) SetZone(z dnsd.Zone) { d.srv.Set(z) }
