package harness

import "time"

// Options tune the default lab.
type Options struct {
	// NTPOffset shifts the lab's NTP clock from the local one (to demonstrate a failing check).
	NTPOffset time.Duration
}

// Default returns the lab's components in start order. Later issues append their stand-ins
// here (registries, Redfish simulators, kube-apiserver, sshd).
func Default(o Options) []Component {
	return []Component{
		&Files{},
		&DNS{},
		&NTP{Offset: o.NTPOffset},
	}
}
