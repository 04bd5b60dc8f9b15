// Package bmctest is a Redfish simulator shaped like a Dell iDRAC9, for tests and the local lab
// only (never imported by the binary's main path).
//
// It follows the iDRAC9 resource tree: Systems/System.Embedded.1 (Boot override, Reset action,
// EthernetInterfaces), Managers/iDRAC.Embedded.1 (FirmwareVersion, Attributes, Jobs, the OEM
// ImportSystemConfiguration action), SessionService with an 8-session limit (RAC0218), and
// VirtualMedia under the Manager ({RemovableDisk, CD}, firmware before 6.00) or under the System
// ({1, 2}, 6.00.02 on). Inserted media are fetched from their URL with HTTP range requests as an
// iDRAC does (RAC0904 when unreachable); a power action boots the server after a delay, consuming
// the one-time boot; firmware before 4.40 ignores the standard Cd override for the virtual CD
// (the quirk that needs ImportSystemConfiguration). Faults are injectable per operation: HTTP
// 500s, iDRAC message IDs (VRM0021, SYS446, RAC0218), slow responses.
//
// Other implementations are Profiles (profile.go: sushy-tools' generic service, DMTF's
// PATCH-only mockup), NewMulti (multi.go: one service managing several systems) and the vendor
// Behaviours (vendors.go), each drawn from documentation rather than guessed:
//
//   - multi-system: sushy-tools driving several libvirt domains, as the Metal3 development
//     environment runs it; a node is addressed by its System (Ironic's redfish driver:
//     redfish_address plus redfish_system_id, "optional if the BMC exposes only one system";
//     https://docs.openstack.org/ironic/latest/admin/drivers/redfish.html; Metal3's BMC address
//     redfish-virtualmedia://host/redfish/v1/Systems/<id>, baremetal-operator docs/api.md).
//     Multi records every request per system.
//   - usbcd-only: Supermicro X11/X12's single UsbCd slot listing CD with USBStick; those BMCs
//     also refuse Inserted/WriteProtected in InsertMedia (openstack/sushy
//     sushy/resources/manager/virtual_media.py, insert_media's notes).
//   - transfer-protocol-required: InsertMedia refused with ActionParameterMissing naming
//     TransferProtocolType until it is given (sushy: is_transfer_protocol_required); this one
//     publishes @Redfish.ActionInfo (DMTF DSP0266, "Action info annotation"; ActionInfo schema).
//   - credentials-required: AMI MegaRAC and NVIDIA DGX refuse InsertMedia without UserName and
//     Password, empty ones accepted (sushy: is_credentials_required); no ActionInfo.
//   - if-match-required: PATCH without If-Match answered 428 Precondition Required, a stale one
//     412 (DMTF DSP0266, "ETags"; HPE iLO 5/6 and Lenovo XCC behave so; sushy sends If-Match
//     with the resource's ETag on its PATCHes).
//   - async-insert: Inserted reads false for a while after a 204 while the BMC mounts the image.
//   - first-slot-taken: the first CD slot refuses the insert (held by another session, iDRAC's
//     VRM0021) while a second CD slot is free.
//   - noop-reset: ComputerSystem.Reset answered 204 while nothing happens (no restart,
//     LastResetTime unchanged): what the evidence rules in package bmc must catch.
//   - ignored-once-override: a server that starts from its disk whatever the one-time override
//     says, while the BMC shows it consumed (iDRAC9 with legacy BIOS boot mode or the virtual
//     optical drive missing from the UEFI boot order; Ironic's "BMCs that do not honour Once").
//
// The iDRAC9 profile reports LastResetTime (ComputerSystem v1_12); the generic and PATCH-only
// ones, like sushy-tools and the mockup, do not.
package bmctest
