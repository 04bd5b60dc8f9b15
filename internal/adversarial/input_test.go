package adversarial

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

const iscHead = "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  additionalImages:\n  - name: "

// TestHugeImageReference: a 100 MB image reference grew the process to 3.6 GB; the file is refused
// by its size in milliseconds, before any YAML is decoded.
func TestHugeImageReference(t *testing.T) {
	path := filepath.Join(t.TempDir(), "isc.yaml")
	if err := os.WriteFile(path, []byte(iscHead+"registry.example.com/x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 100<<20); err != nil { // the name runs on for 100 MB (sparse: no disk used)
		t.Fatal(err)
	}
	start := time.Now()
	_, err := mirror.LoadISC(path)
	var tl *fsroot.TooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "ImageSetConfiguration") || !strings.Contains(err.Error(), "4 MiB") {
		t.Fatalf("100 MB ISC: %v", err)
	}
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Errorf("refused after %v", d)
	}
}

// TestLongNamesRefused: within the file cap, an image reference, a package name or a catalog past
// its length cap is refused with the field and the limit named.
func TestLongNamesRefused(t *testing.T) {
	long := "registry.example.com/" + strings.Repeat("a", 3000)
	for field, isc := range map[string]string{
		"mirror.additionalImages[0].name": iscHead + long + "\n",
		"mirror.operators[0].catalog":     "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  operators:\n  - catalog: " + long + "\n",
		"mirror.operators[0].packages[0].name": "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  operators:\n" +
			"  - catalog: registry.redhat.io/redhat/redhat-operator-index:v4.18\n    packages:\n    - name: " + strings.Repeat("p", 300) + "\n",
	} {
		path := filepath.Join(t.TempDir(), "isc.yaml")
		os.WriteFile(path, []byte(isc), 0o644)
		_, err := mirror.LoadISC(path)
		probs, ok := mirror.AsISCProblems(err)
		found := false
		for _, p := range probs {
			if p.Path == field && strings.Contains(p.Message, "more than the") {
				found = true
			}
		}
		if !ok || !found {
			t.Errorf("%s: %v", field, err)
		}
	}
}

// TestProfileValueCap: a profile value past the generic cap (64 KiB) is refused while decoding,
// without the value in the message.
func TestProfileValueCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "site.yaml")
	huge := strings.Repeat("z", 70<<10)
	os.WriteFile(path, []byte("metadata:\n  name: "+huge+"\n"), 0o644)
	_, err := site.Load(path)
	if err == nil || !strings.Contains(err.Error(), "more than the") || strings.Contains(err.Error(), huge[:100]) {
		t.Fatalf("%.300v", err)
	}
}
