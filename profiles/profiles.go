package profiles

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.yaml schema.json
var files embed.FS

// Names lists the embedded profiles, sorted ("compact-3node", "dell-xe7740-h200", ...).
func Names() []string {
	entries, _ := fs.Glob(files, "*.yaml")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e, ".yaml"))
	}
	sort.Strings(names)
	return names
}

// Get returns the text of one profile, comments included.
func Get(name string) ([]byte, error) {
	if strings.ContainsAny(name, "/\\") || name == "" {
		return nil, fmt.Errorf("profile %q: %w", name, fs.ErrNotExist)
	}
	b, err := files.ReadFile(name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("profile %q not found (available: %s): %w", name, strings.Join(Names(), ", "), fs.ErrNotExist)
	}
	return b, nil
}

// Schema returns the JSON Schema of the site profile format (generated from internal/site).
func Schema() []byte {
	b, _ := files.ReadFile("schema.json")
	return b
}
