package main

import (
	"errors"
	"strings"
	"testing"
)

// TestParseMaxUnavailable: --max-unavailable takes what MachineConfigPool.spec.maxUnavailable
// takes, a count of at least 1 or a percent from 1% to 100%; anything else is a usage error
// naming the flag, and empty leaves the pools' own value.
func TestParseMaxUnavailable(t *testing.T) {
	for in, want := range map[string]string{"1": "1", "3": "3", "25%": "25%", "100%": "100%", " 2 ": "2"} {
		v, err := parseMaxUnavailable(in)
		if err != nil || v == nil || v.String() != want {
			t.Errorf("parseMaxUnavailable(%q) = %v, %v; want %s", in, v, err, want)
		}
	}
	if v, err := parseMaxUnavailable(""); v != nil || err != nil {
		t.Errorf("empty: %v, %v; want nil, nil", v, err)
	}
	for _, in := range []string{"0", "-1", "0%", "101%", "half", "2.5", "%"} {
		v, err := parseMaxUnavailable(in)
		var u usageError
		if err == nil || !errors.As(err, &u) || !strings.Contains(err.Error(), "--max-unavailable") {
			t.Errorf("parseMaxUnavailable(%q) = %v, %v; want a usage error naming the flag", in, v, err)
		}
	}
}
