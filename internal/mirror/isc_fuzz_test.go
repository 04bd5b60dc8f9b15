package mirror

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadISC feeds arbitrary bytes to the ImageSetConfiguration reader: it must never panic, a
// problem must be an *ISCError whose every problem is positioned in the file (or a plain error
// naming it), and a configuration it accepts must respect the length caps.
//
//	make fuzz (or go test -run '^$' -fuzz=FuzzLoadISC -fuzztime=60s ./internal/mirror/)
func FuzzLoadISC(f *testing.F) {
	for _, s := range []string{
		"apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  additionalImages:\n  - name: registry.example.com/a:1\n",
		"apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  platform:\n    channels:\n    - {name: stable-4.18, minVersion: 4.18.1}\n",
		"apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  operators:\n  - catalog: registry.redhat.io/redhat/redhat-operator-index:v4.18\n    packages: [{name: a, channels: [{name: stable}]}]\n",
		"a: &a [*a, *a]\n", "---\n---\n", "mirror: {additionalImages: [{name: " + strings.Repeat("x", 1100) + "}]}\n",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "isc.yaml")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := LoadISC(p)
		var ie *ISCError
		if errors.As(err, &ie) {
			for _, pr := range ie.Problems {
				if pr.File != p || pr.Message == "" {
					t.Fatalf("problem without file or message: %#v", pr)
				}
			}
			return
		}
		if err != nil {
			if !strings.Contains(err.Error(), p) {
				t.Fatalf("error not naming the file: %v", err)
			}
			return
		}
		for _, im := range c.Mirror.AdditionalImages {
			if len(im.Name) > 1024 {
				t.Fatalf("accepted an image name of %d characters", len(im.Name))
			}
		}
	})
}
