// Package gather collects what a field engineer needs when an install fails: the journals of the
// agent, assisted-service, bootkube and kubelet and the output of agent-gather from each node over
// SSH, each BMC's system event log through Redfish, and the bootstrap journal, into one tarball
// with an index. A source that fails is listed in the index with its error; it never stops the
// others.
//
// SSH host keys are recorded on first contact in a known_hosts file in the work dir and verified on
// every later connection: a changed key is refused (HostKeyChangedError), never ignored.
// The package also answers the configure stage's question "is this kernel module loaded?" with
// lsmod over the same verified connection.
package gather
