package harness

import "time"

// Options tune the default lab.
type Options struct {
	// NTPOffset shifts the lab's NTP clock from the local one (to demonstrate a failing check).
	NTPOffset time.Duration
	// ReleaseComponents and LayerKiB size the synthetic release (0: 20 components, 64 KiB);
	// tests make it small.
	ReleaseComponents, LayerKiB int
}

// Default returns the lab's components in start order. Later issues append their stand-ins
// here (registries, Redfish simulators, kube-apiserver, sshd).
func Default(o Options) []Component {
	return []Component{
		&Files{},
		&DNS{},
		&NTP{Offset: o.NTPOffset},
		&BMC{},
		&Registry{Components: o.ReleaseComponents, LayerKiB: o.LayerKiB},
		&Installer{},
	}
}
