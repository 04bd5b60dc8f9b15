// Package bmc drives servers' baseboard management controllers over Redfish: it reads what a BMC
// reports (model, firmware, power, virtual media, boot override, NIC MACs), checks it read-only
// before anything changes (Preflight), and boots a node from a virtual-media ISO step by step,
// verifying each step by reading it back (BootNode, BootAll).
//
// Writes go through github.com/bmc-toolbox/bmclib/v2 (v2.3.5, its gofish Redfish provider). Dell
// iDRAC9 behaviours bmclib lacks (ImportSystemConfiguration boot-once on firmware before 4.40, the
// Lifecycle Controller job queue, Dell message IDs such as VRM0021, SYS446, RAC0218, RAC0904) are
// raw Redfish calls in dell.go, each commented with the firmware it concerns.
//
// The package never prints, never reads flags and never imports the pipeline: callers pass a
// context, typed options, a Journal for finished steps and a progress callback.
package bmc
