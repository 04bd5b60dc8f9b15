package site

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to the decoder, then to defaults and Validate. It must never
// panic; a failure must be a typed *Errors whose every problem is positioned in the input file;
// and Validate must be deterministic. Seeds: testdata/fuzz/FuzzLoad plus the test profiles.
//
//	go test -fuzz=FuzzLoad -fuzztime=60s ./internal/site/
func FuzzLoad(f *testing.F) {
	// The profiles (10 KB each) are left out: small seeds keep the fuzzer fast, and the
	// profiles test covers them.
	seeds, _ := filepath.Glob("testdata/*/*.yaml")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	noEnv := func(string) (string, bool) { return "", false }
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data, "fuzz.yaml")
		if err != nil {
			ps, ok := AsProblems(err)
			if !ok || !IsInvalid(err) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			if !ps.HasErrors() {
				t.Fatal("an *Errors without an error")
			}
			for _, p := range ps {
				if p.File != "fuzz.yaml" || p.Message == "" || p.Remedy == "" {
					t.Fatalf("problem without file, message or remedy: %#v", p)
				}
			}
			return
		}
		s.SetDefaults()
		again := *s
		again.SetDefaults()
		if !reflect.DeepEqual(*s, again) {
			t.Fatal("SetDefaults is not idempotent")
		}
		a := s.Validate(MissingFilesAsWarnings(), WithLookupEnv(noEnv))
		b := s.Validate(MissingFilesAsWarnings(), WithLookupEnv(noEnv))
		if !reflect.DeepEqual(a, b) {
			t.Fatal("Validate is not deterministic")
		}
		for _, p := range a {
			if p.Message == "" || p.Remedy == "" || p.Path == "" && p.Line == 0 {
				t.Fatalf("problem without message, remedy or location: %#v", p)
			}
		}
	})
}
