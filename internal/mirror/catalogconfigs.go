package mirror

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// CatalogConfigsDir is where a registry run writes each mirrored catalog's file-based configs,
// catalogs/<major.minor>/<CatalogSource name>/, the layout `bootstrap upgrade plan --graph`
// reads a hop's target catalog from (internal/upgrade: CatalogsDir).
const CatalogConfigsDir = "catalogs"

// catalogMinorTag is a catalog tag naming an OpenShift minor (v4.19).
var catalogMinorTag = regexp.MustCompile(`:v(\d+\.\d+)$`)

// WriteCatalogConfigs reads each mirrored catalog back from the destination, by digest, and
// writes its configs (WriteFBC) under outDir/catalogs/<minor>/<CatalogSource name>/, replacing
// what an earlier run wrote there; it returns the directories written, relative to outDir. A
// catalog whose source tag names no OpenShift minor is left out: no hop targets it. dest is the
// registry the catalogs were mirrored to.
func WriteCatalogConfigs(ctx context.Context, outDir string, cats []CatalogOut, o Options, dest Endpoint) ([]string, error) {
	ro := o // read from the destination: its endpoint, no source override or layout
	ro.Source, ro.SourceRegistry, ro.SourceDir = dest, "", ""
	var dirs []string
	for _, c := range cats {
		m := catalogMinorTag.FindStringSubmatch(c.Source)
		if m == nil || !validCatalogSourceName(c.Name) || c.Image == "" {
			continue
		}
		dc, err := ReadCatalog(ctx, c.Image, "linux/amd64", ro)
		if err != nil {
			return dirs, fmt.Errorf("catalog %s: read back %s for upgrade plan: %w", c.Source, c.Image, err)
		}
		files, err := WriteFBC(dc)
		if err != nil {
			return dirs, err
		}
		rel := filepath.Join(CatalogConfigsDir, m[1], c.Name)
		dir := filepath.Join(outDir, rel)
		if err := os.RemoveAll(dir); err != nil {
			return dirs, err
		}
		for name, b := range files {
			if strings.Contains(name, "..") {
				return dirs, fmt.Errorf("catalog %s: file name %q", c.Source, name)
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
				return dirs, err
			}
			if err := writeFile(filepath.Join(dir, name), b); err != nil {
				return dirs, err
			}
		}
		dirs = append(dirs, filepath.ToSlash(rel))
	}
	return dirs, nil
}
