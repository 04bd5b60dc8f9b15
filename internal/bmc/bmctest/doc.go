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
package bmctest
