package argocdtest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The mounted files follow the ConfigMap's keys, as a kubelet's ConfigMap volume does: new and
// changed keys written, removed keys' files removed, names that are no key never written.
func TestMountFollowsKeys(t *testing.T) {
	m := &mounter{written: map[string]string{}}
	dir := filepath.Join(t.TempDir(), "tls")
	files := func() []string {
		var out []string
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			out = append(out, e.Name()+"="+string(b))
		}
		return out
	}
	if err := m.sync(dir, map[string]string{"git.site.example": "A", "127.0.0.1": "B", "../escape": "C"}); err != nil {
		t.Fatal(err)
	}
	if got, want := files(), []string{"127.0.0.1=B", "git.site.example=A"}; !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape")); err == nil {
		t.Fatal("a key with a path separator was written outside the mount")
	}
	if err := m.sync(dir, map[string]string{"git.site.example": "A2"}); err != nil {
		t.Fatal(err)
	}
	if got, want := files(), []string{"git.site.example=A2"}; !slices.Equal(got, want) {
		t.Fatalf("after an update: files %v, want %v", got, want)
	}
}
