package harness

// Components returns the started components in start order, for tests that inspect or steer a
// stand-in (fault injection, counters).
func (l *Lab) Components() []Component { return append([]Component(nil), l.started...) }
