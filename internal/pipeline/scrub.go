package pipeline

import (
	"bytes"
	"encoding/json"
	"sort"
)

// MinSecretLen is the shortest value SecretScrubber replaces: shorter ones would mangle
// ordinary data and are not secrets worth the name.
const MinSecretLen = 6

// SecretScrubber returns a Runner.Scrub that replaces every occurrence of the given secret values
// (as they appear inside JSON strings) with "REDACTED". cmd/ builds it from the credentials files
// the site profile references, at the moment of the run; the values never leave memory.
func SecretScrubber(values []string) func([]byte) []byte {
	var needles [][]byte
	for _, v := range values {
		if len(v) < MinSecretLen {
			continue
		}
		enc, err := json.Marshal(v)
		if err != nil {
			continue
		}
		needles = append(needles, enc[1:len(enc)-1]) // the escaped form, without quotes
		if raw := []byte(v); !bytes.Equal(raw, enc[1:len(enc)-1]) {
			needles = append(needles, raw)
		}
	}
	// Longest first, so a secret containing another is replaced whole.
	sort.Slice(needles, func(i, j int) bool { return len(needles[i]) > len(needles[j]) })
	return func(b []byte) []byte {
		for _, n := range needles {
			if bytes.Contains(b, n) {
				b = bytes.ReplaceAll(b, n, []byte("REDACTED"))
			}
		}
		return b
	}
}
