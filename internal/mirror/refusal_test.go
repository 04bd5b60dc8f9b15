package mirror

import (
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

// TestCatalogFolderMissing reads catalog images whose index label names a folder without a
// catalog: the error says where the label pointed, how much was read there, where files named
// like a catalog's are, and the fix.
func TestCatalogFolderMissing(t *testing.T) {
	e := newEnv(t, nil)
	pkg := []byte(`{"schema":"olm.package","name":"x-op","defaultChannel":"stable"}` + "\n")
	for _, c := range []struct {
		name  string
		files map[string][]byte
		want  []string
	}{
		{"catalog elsewhere", map[string][]byte{"catalog/x-op/catalog.json": pkg, "etc/os-release.json": []byte("{}")},
			[]string{"no packages under /configs", "label points there", "no .json or .yaml file in it", "are under /catalog", "rebuild the catalog image"}},
		{"folder without packages", map[string][]byte{"configs/notes.json": []byte(`{"schema":"example.note"}` + "\n")},
			[]string{"no packages under /configs", "the 1 catalog files read there hold no olm.package", "rebuild the catalog image"}},
	} {
		layer, err := mirrortest.FilesLayer(c.files)
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.b.Image(ctx(t), e.src.Host+"/idx/"+strings.ReplaceAll(c.name, " ", "-"), "v1", mirrortest.ImageSpec{Layers: []mirrortest.Blob{layer},
			Labels: map[string]string{ConfigsLabel: "/configs"}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = ReadCatalog(ctx(t), e.src.Host+"/idx/"+strings.ReplaceAll(c.name, " ", "-")+":v1", "linux/amd64", e.opts())
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\nwant it to say %q", c.name, err, w)
			}
		}
	}
}
