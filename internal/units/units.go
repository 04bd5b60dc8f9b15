// Package units formats quantities for people: byte counts in binary units. It is a leaf (the
// standard library only), so domain packages format sizes without importing a renderer.
package units

import "fmt"

// Bytes formats a byte count with binary units ("1.5 GiB"), as every human-facing output here does.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
