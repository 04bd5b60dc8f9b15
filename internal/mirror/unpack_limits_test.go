package mirror

import (
	"bytes"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
)

// TestPartLargerThanDeclared: entries holding more than the part's declared size are refused at
// the entry that passes it (a reader that expands an entry beyond its tar bytes cannot write
// more than archive.json promised).
func TestPartLargerThanDeclared(t *testing.T) {
	part := tarOf(t, [2]string{"blobs/sha256/aa", strings.Repeat("a", 600)}, [2]string{"blobs/sha256/bb", strings.Repeat("b", 600)})
	root, err := fsroot.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	err = extractPart(bytes.NewReader(part), root, 1000)
	if err == nil || !strings.Contains(err.Error(), `entry "blobs/sha256/bb"`) || !strings.Contains(err.Error(), "1000 B") {
		t.Fatalf("%v", err)
	}
	if _, err := root.Lstat("blobs/sha256/bb"); err == nil {
		t.Error("the entry past the declaration was written")
	}
}
