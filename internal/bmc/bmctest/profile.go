package bmctest

// Profile is the kind of Redfish service a simulator reproduces. Each one is drawn from how a real
// implementation behaved when bootstrap met it; they are selectable per node (Options.Profile),
// so a fleet can mix them.
type Profile string

// Profiles.
const (
	// ProfileIDRAC9 is a Dell iDRAC9 (the default). Options.Firmware picks the virtual-media
	// layout: before 6.00 the slots live under the Manager (RemovableDisk, CD), from 6.00 under
	// the System (1, 2); before 4.40 the standard Cd/Once override is accepted but ignored.
	ProfileIDRAC9 Profile = "idrac9"
	// ProfileGeneric is a generic Redfish service shaped like OpenStack's sushy-tools emulator:
	// it reports BootSourceOverrideEnabled=Continuous whatever it is told (so a Cd override stays
	// armed across every reboot until someone takes it off), does not list the allowed values of
	// BootSourceOverrideEnabled, has no SessionService (basic auth only), and keeps its media
	// under the Manager (Cd, Floppy) with InsertMedia/EjectMedia actions.
	ProfileGeneric Profile = "generic"
	// ProfilePatchOnly is shaped like DMTF's Redfish-Mockup-Server serving public-rackmount1:
	// virtual media only under the System, slots without InsertMedia/EjectMedia actions (PATCH
	// of Image/Inserted is the only way, and the slot's Allow header says so), and POSTs to the
	// media action URIs answered 204 while nothing changes. Power actions work (a server that
	// cannot be reset cannot be booted by anyone).
	ProfilePatchOnly Profile = "patch-only"
)

// Profiles lists every profile, for tests that run against each.
func Profiles() []Profile { return []Profile{ProfileIDRAC9, ProfileGeneric, ProfilePatchOnly} }

// paths returns the System and Manager paths of a profile.
func (p Profile) paths() (sys, mgr string) {
	switch p {
	case ProfileGeneric:
		// sushy-tools names both after the libvirt domain's UUID.
		return root + "/Systems/5b2e0f1c-7d3a-4e0b-9a51-1c2d3e4f5a60", root + "/Managers/5b2e0f1c-7d3a-4e0b-9a51-1c2d3e4f5a60"
	case ProfilePatchOnly:
		return root + "/Systems/437XR1138R2", root + "/Managers/BMC"
	}
	return root + "/Systems/System.Embedded.1", root + "/Managers/iDRAC.Embedded.1"
}

func (b *BMC) idrac() bool { return b.opts.Profile == ProfileIDRAC9 }

// vendorInfo is what the System and Manager report about who made them.
func (b *BMC) vendorInfo() (manufacturer, redfish string) {
	if b.opts.Manufacturer != "" {
		_, v := (&BMC{opts: Options{Profile: b.opts.Profile, Firmware: b.opts.Firmware}}).vendorInfo()
		return b.opts.Manufacturer, v
	}
	switch b.opts.Profile {
	case ProfileGeneric:
		return "QEMU", "1.0.2"
	case ProfilePatchOnly:
		return "Contoso", "1.6.0"
	}
	v := "1.17.0" // iDRAC9 6.x
	if versionLess(b.opts.Firmware, "4.00.00.00") {
		v = "1.4.0"
	} else if versionLess(b.opts.Firmware, "6.00.00.00") {
		v = "1.11.0"
	}
	return "Dell Inc.", v
}

// enabledAllowed is BootSourceOverrideEnabled@Redfish.AllowableValues (nil: not listed).
func (b *BMC) enabledAllowed() []string {
	if b.opts.BootEnabledAllowed != nil {
		return b.opts.BootEnabledAllowed
	}
	if b.opts.Profile == ProfileGeneric {
		return nil
	}
	return []string{"Once", "Continuous", "Disabled"}
}

// mediaActions reports whether the slots carry InsertMedia/EjectMedia actions.
func (b *BMC) mediaActions() bool { return b.opts.Profile != ProfilePatchOnly }
