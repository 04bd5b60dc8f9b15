// Package bmc drives servers' baseboard management controllers over Redfish: it reads what a BMC
// reports (model, firmware, power, virtual media, boot override, NIC MACs), checks it read-only
// before anything changes (Preflight), boots a node from a virtual-media ISO step by step,
// verifying each step by reading it back (BootNode, BootAll), and hands a node over to its disk
// once it is installed (TakeOverrideOff).
//
// What differs between BMCs sits behind one small interface, vendor (vendor.go), chosen once per
// connection after discovery: dell (dell.go: Dell iDRAC9, both media layouts, the
// ImportSystemConfiguration boot-once before firmware 4.40, the Lifecycle Controller job queue,
// Dell message IDs and iDRAC wording) and generic (any standard Redfish service, e.g. sushy-tools,
// DMTF's mockups, OpenBMC). Both share the flow: a one-time Cd override where the BMC honours it,
// else a persistent one that the install stage takes off, as Ironic does.
//
// Which system: a Redfish service may manage several systems (sushy-tools with several VMs, a
// chassis manager, multi-host OpenBMC). bmc.address then names the node's own System,
// https://host/redfish/v1/Systems/<id> (the Metal3/Ironic address scheme), and every action —
// media, override, power, reads — goes to that System and to the virtual media that belongs to
// it (its own, or its manager's found through the System's Links.ManagedBy). On a service with
// several systems and none named, every call refuses before any change (ErrManySystems), listing
// each system's id, name and MACs and naming the one that reports the node's bootMAC; preflight
// reports the same as its bmc-system check (system.go).
//
// Evidence rules: what lets the boot flow say a node booted, and what it says otherwise.
// A BMC's 204 to a Reset proves only that the request arrived, and PowerState On after a
// restart is what it read before too; so a node is "booted" only on evidence read after the
// power action (evidence.go's judge applies these rules; evidence_rules_test.go has a case per
// rule; NodeResult.Evidence or NodeResult.Unverified carries the outcome to the journal):
//
//   - R1 power transition: the action was On from Off and the BMC then reads On.
//   - R2 LastResetTime advanced: the System's LastResetTime (ComputerSystem v1_12) differs from
//     the value read before the action.
//   - R3 BootProgress advanced: BootProgress.LastStateTime (ComputerSystem v1_13) differs from
//     the value read before the action.
//   - R4 one-time override consumed: a Cd/Once override armed before the action reads back
//     no longer armed (the firmware took it at POST).
//   - R5 ISO read: the node read its ISO after the power action (the local ISO server's fetch
//     log, WithBootEvidence). Where the ISO is served here this is required: without it the
//     boot fails (ErrNoISORead) — the override was ignored and the disk booted.
//   - R6 served elsewhere: with no fetch log (iso.baseURL on another server) R5 cannot exist, so
//     the node is "booted, unverified" with the reason and what R1–R4 showed.
//   - R7 no reboot seen: none of R1–R4 and no fetch log. If the BMC reports LastResetTime or
//     BootProgress, or a one-time override stayed armed, the reset demonstrably did nothing:
//     a failure (ErrNoReset) with a remedy. Otherwise (a BMC with none of those properties and
//     a persistent override) the node is "booted, unverified" saying so.
//
// Which client does what, and why:
//   - github.com/bmc-toolbox/bmclib/v2 (v2.3.5, its gofish Redfish provider) opens the session
//     (falling back to basic auth on a full session table or a BMC without a SessionService),
//     sets the boot override (SetBootDevice: it retries with fewer fields for BMCs that refuse
//     some), sends power actions (SetPowerState) and inserts media on iDRAC9 (SetVirtualMedia,
//     whose eject-before-insert suits the iDRAC). It is the well-trodden path for these writes.
//     bmclib v2.3.5 picks a system by its Name (or the only one), so on a multi-system service
//     these writes go through the small client to the chosen System instead.
//   - The small Redfish client (redfish.go, basic auth, no session) does every read, every
//     read-back, and the writes bmclib cannot do precisely: ejecting one named slot (bmclib ejects
//     only the first slot of a media type and reports success when a slot has no EjectMedia
//     action), inserting by PATCH of Image/Inserted where a slot has no actions, taking the
//     override off after install, and Dell's OEM actions. Preflight uses only this client, with
//     GETs only, so it takes no session and changes nothing.
//
// The package never prints, never reads flags and never imports the pipeline: callers pass a
// context, typed options, a Journal for finished steps and a progress callback.
package bmc
