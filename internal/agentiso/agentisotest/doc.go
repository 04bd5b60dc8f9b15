// Package agentisotest builds CoreOS-live-shaped ISOs with the real xorriso, xz and cpio tools, and
// reads ISOs back with osirrox and isoinfo, for tests of the agentiso package and of the test
// double of openshift-install. It is test support: nothing in the bootstrap binary imports it.
package agentisotest
