// Package tarpart reads one part of a carried mirror archive (a tar written by bootstrap mirror)
// into a folder, as a stream and within limits: regular files only (a sparse, hard-link,
// symbolic-link, device or FIFO entry is refused with the entry named), names that stay inside
// the folder and out of its Reserved records, no link followed on the way, and no more bytes
// than the part declares. It is a leaf of its own, apart from the heavy mirror package, so that
// its fuzz target (FuzzExtract, make fuzz) builds and starts in seconds.
package tarpart
