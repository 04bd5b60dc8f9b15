// Package fsroot writes and reads inside a folder a user or a peer chose (an archive carried on
// removable media, a gather destination, a work dir) without ever leaving it: every path is
// resolved beneath the folder's open descriptor with openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS)
// (a walk of O_NOFOLLOW opens on kernels without openat2), so a symbolic link planted at any
// level is refused rather than followed, and files are created O_EXCL|O_NOFOLLOW.
//
// The folder itself is opened by the path the caller gives, links included: it is the caller's
// choice. Everything beneath it is the peer's, and is trusted with nothing.
//
// It is also the one opener of every file read from outside (file.go): ReadFile/OpenFile for a
// file the operator named (links followed), ReadBeneath/OpenBeneath for one a peer wrote (no link
// at its last element). Each takes a Kind whose cap is checked before reading and named in the
// error, and opens O_NONBLOCK so that a FIFO or device is refused instead of blocking forever.
package fsroot
