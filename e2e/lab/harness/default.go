package harness

import "time"

// Options tune the default lab.
type Options struct {
	// NTPOffset shifts the lab's NTP clock from the local one (to demonstrate a failing check).
	NTPOffset time.Duration
	// SourceCache shares one seeded source registry storage among labs (see Source.Cache).
	SourceCache string
}

// Default returns the lab's components in start order: files, DNS, NTP, the source and mirror
// registries, sshd, the Redfish simulators, the openshift-install test double, the Git server, the cluster
// (kube-apiserver and its player), and the ISO
// server while the boot stage does not start one itself.
func Default(o Options) []Component {
	bmcs, git := &BMCs{}, &Git{}
	src := &Source{Seed: SeedContent, Cache: o.SourceCache}
	cs := []Component{
		&Files{},
		&DNS{},
		&NTP{Offset: o.NTPOffset},
		src,
		&Updates{Source: src},
		&Registry{},
		&SSHD{},
		bmcs,
		&Installer{},
		git,
		&Cluster{BMCs: bmcs, Git: git},
	}
	if NeedISOServer() {
		cs = append(cs, &ISOServer{})
	}
	return cs
}
