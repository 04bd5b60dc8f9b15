package agentiso

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
)

// The installer binary in a release payload does not know which release it belongs to: it carries
// NUL-framed placeholders that `oc adm release extract` overwrites with the release image pull
// spec, the release name and the payload architecture (openshift/installer pkg/asset/releaseimage
// and pkg/version; the layout is "\x00_NAME_LOCATION_\x00" followed by 'X' padding and a NUL).
// Unstamped, `openshift-install version` reports its build-time defaults and it would install its
// built-in release, so extraction stamps them just as oc does.
const (
	markerImage   = "RELEASE_IMAGE"
	markerVersion = "RELEASE_VERSION"
	markerArch    = "RELEASE_ARCHITECTURE"
)

// minPadding is how many 'X' must follow a marker's prefix: shorter runs are not placeholders.
const minPadding = 32

// markerPrefix builds "\x00_NAME_LOCATION_\x00" at run time, so that this binary never carries a
// complete placeholder itself.
func markerPrefix(name string) []byte {
	p := []byte{0, '_'}
	p = append(p, name...)
	p = append(p, "_LOCATION_"...)
	return append(p, 0)
}

// stampRelease writes each value, NUL-terminated, over the first placeholder of its name in f,
// from the placeholder's first byte, and returns the names stamped, sorted. A placeholder that is
// absent is skipped (older installers lack the architecture one); a value longer than its
// placeholder is an error.
func stampRelease(f *os.File, values map[string]string) ([]string, error) {
	var stamped []string
	for name, value := range values {
		if value == "" {
			continue
		}
		off, capacity, err := findMarker(f, markerPrefix(name))
		if err != nil {
			return nil, err
		}
		if off < 0 {
			continue
		}
		if len(value) > capacity {
			return nil, fmt.Errorf("stamp %s: the value is %d bytes, the placeholder holds %d", name, len(value), capacity)
		}
		if _, err := f.WriteAt(append([]byte(value), 0), off); err != nil {
			return nil, fmt.Errorf("stamp %s: %w", name, err)
		}
		stamped = append(stamped, name)
	}
	sort.Strings(stamped)
	return stamped, nil
}

// findMarker returns the offset of the first prefix in f followed by at least minPadding 'X' and
// a NUL, and how many bytes a value may have there (the prefix and the padding: the value's NUL
// terminator takes the final NUL's place at most). -1 when there is none.
func findMarker(f *os.File, prefix []byte) (int64, int, error) {
	const chunk = 4 << 20
	const window = 1024 // longer than any placeholder: a match across chunks is found whole in the next
	buf := make([]byte, chunk+window)
	var base int64
	for {
		n, err := f.ReadAt(buf, base)
		if err != nil && !errors.Is(err, io.EOF) {
			return -1, 0, err
		}
		data := buf[:n]
		for from := 0; ; {
			i := bytes.Index(data[from:], prefix)
			if i < 0 {
				break
			}
			at := from + i
			pad := 0
			for j := at + len(prefix); j < len(data) && data[j] == 'X'; j++ {
				pad++
			}
			end := at + len(prefix) + pad
			if pad >= minPadding && end < len(data) && data[end] == 0 {
				return base + int64(at), len(prefix) + pad, nil
			}
			from = at + 1
		}
		if n < len(buf) {
			return -1, 0, nil
		}
		base += chunk
	}
}
