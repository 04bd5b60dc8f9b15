package mirror

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/types/descriptor"
	"github.com/regclient/regclient/types/manifest"
	"github.com/regclient/regclient/types/ref"
)

// ConfigsLabel is the label naming the file-based catalog's directory in a catalog image.
const ConfigsLabel = "operators.operatorframework.io.index.configs.v1"

// ReadCatalog reads the file-based catalog of a catalog image (for platform plat when it is an
// index). The directory comes from the ConfigsLabel label of the image config. Layers are read
// from the last one back and reading stops after the first layer holding catalog files, so the
// opm base layers below are never downloaded. When packages are named, the documents of every
// other package are dropped while parsing, so memory follows the selection, not the catalog.
func ReadCatalog(ctx context.Context, image, plat string, o Options, packages ...string) (*declcfg.DeclarativeConfig, error) {
	c, err := readCatalogAs(ctx, image, plat, o, readFull, packages)
	if err != nil {
		return nil, err
	}
	return c.dc, nil
}

// catalogRead is a catalog as read: with light set, bundles hold only their olm.package property
// (what selection and model validation need) besides their images, and the full documents of the
// bundles selected are read again from the layer that holds the catalog (fullBundles). A catalog's
// bulk is in its bundles' other properties (olm.csv.metadata, olm.bundle.object): so memory
// follows the selection, not the catalog.
type catalogRead struct {
	dc     *declcfg.DeclarativeConfig
	r      ref.Ref
	layer  descriptor.Descriptor // the layer holding the catalog
	prefix string                // the configs directory, "configs/"
	only   map[string]bool
	mode   readMode
}

// readMode says how much of each bundle a catalog read keeps.
type readMode int

const (
	readFull   readMode = iota // every document whole
	readLight                  // bundles: name, package, image, olm.package, related images
	readSelect                 // readLight without the related images: for a selection whose full documents are read again
)

// readCatalogLight reads a catalog for selection: light bundles, see catalogRead; with forSelection
// also without their related images (about half of a light bundle), for a selection whose full
// documents fullBundles reads again.
func readCatalogLight(ctx context.Context, image, plat string, o Options, forSelection bool, packages ...string) (*catalogRead, error) {
	if forSelection {
		return readCatalogAs(ctx, image, plat, o, readSelect, packages)
	}
	return readCatalogAs(ctx, image, plat, o, readLight, packages)
}

// readCatalogAs reads a catalog, retrying temporary failures.
func readCatalogAs(ctx context.Context, image, plat string, o Options, mode readMode, packages []string) (*catalogRead, error) {
	rc, r, err := sourceClient(image, o)
	if err != nil {
		return nil, err
	}
	var c *catalogRead
	o = o.withRun()
	err = o.retry(ctx, []string{r.Registry}, func(ctx context.Context) error {
		var err error
		c, err = readCatalog(ctx, rc, r, plat, packages, mode)
		return err
	})
	return c, err
}

// fullBundles replaces the light bundles of dc (a selection from c) with their full documents,
// read again from the catalog's layer, one document at a time.
func (c *catalogRead) fullBundles(ctx context.Context, o Options, dc *declcfg.DeclarativeConfig) error {
	if c.mode == readFull {
		return nil
	}
	want := make(map[string]int, len(dc.Bundles))
	for i, b := range dc.Bundles {
		want[b.Package+"/"+b.Name] = i
	}
	rc, err := newClient(o, c.r.Registry)
	if err != nil {
		return err
	}
	o = o.withRun()
	return o.retry(ctx, []string{c.r.Registry}, func(ctx context.Context) error {
		found := 0
		_, err := scanLayer(ctx, rc, c.r, c.layer.Digest.String(), c.layer.Size, c.isCatalogFile, func(name string, rd io.Reader) (bool, error) {
			return true, declcfg.WalkMetasReader(rd, func(m *declcfg.Meta, err error) error {
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				i, ok := want[m.Package+"/"+m.Name]
				if m.Schema != declcfg.SchemaBundle || !ok {
					return nil
				}
				part, err := declcfg.LoadSlice([]*declcfg.Meta{m})
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				dc.Bundles[i] = part.Bundles[0]
				found++
				return nil
			})
		})
		if err == nil && found != len(want) {
			err = permanent(fmt.Errorf("layer %s: %d of the %d selected bundles found on the second read", c.layer.Digest, found, len(want)))
		}
		return err
	})
}

func (c *catalogRead) isCatalogFile(name string) bool {
	return strings.HasPrefix(name, c.prefix) && (strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml"))
}

// readCatalog is one attempt of ReadCatalog or readCatalogLight.
func readCatalog(ctx context.Context, rc *regclient.RegClient, r ref.Ref, plat string, packages []string, mode readMode) (*catalogRead, error) {
	m, err := platformImage(ctx, rc, r, plat)
	if err != nil {
		return nil, err
	}
	cd, err := m.(manifest.Imager).GetConfig()
	if err != nil {
		return nil, err
	}
	cfg, err := rc.BlobGetOCIConfig(ctx, r, cd)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	dir := cfg.GetConfig().Config.Labels[ConfigsLabel]
	if dir == "" {
		return nil, permanent(fmt.Errorf("no %s label; is it a file-based catalog?", ConfigsLabel))
	}
	c := &catalogRead{dc: &declcfg.DeclarativeConfig{}, r: r, prefix: strings.Trim(dir, "/") + "/", mode: mode}
	if len(packages) > 0 {
		c.only = map[string]bool{}
		for _, p := range packages {
			c.only[p] = true
		}
	}
	files, elsewhere := 0, map[string]bool{} // what a missing catalog's message names
	want := func(name string) bool {
		if c.isCatalogFile(name) {
			return true
		}
		if root, ok := catalogRoot(name); ok && len(elsewhere) < 64 {
			elsewhere[root] = true
		}
		return false
	}
	err = scanImageFilesAt(ctx, rc, r, plat, want, func(name string, rd io.Reader) (bool, error) {
		files++
		return true, parseFBC(c.dc, name, rd, c.only, mode)
	}, &c.layer)
	if err != nil {
		return nil, err
	}
	if len(c.dc.Packages) == 0 {
		return nil, permanent(configsNotFound(dir, files, elsewhere))
	}
	return c, nil
}

// parseFBC adds the documents of one catalog file (a JSON stream or YAML documents) to c, as
// opm loads them, one document at a time from the stream: no document is kept raw beside its
// parsed form, and when only is set, documents of other packages are dropped as they are read, so
// memory follows the selection, not the catalog.
func parseFBC(c *declcfg.DeclarativeConfig, name string, r io.Reader, only map[string]bool, mode readMode) error {
	err := declcfg.WalkMetasReader(r, func(m *declcfg.Meta, err error) error {
		if err != nil {
			return err
		}
		pkg := m.Package
		if m.Schema == declcfg.SchemaPackage {
			pkg = m.Name
		}
		if only != nil && pkg != "" && !only[pkg] {
			return nil
		}
		if mode != readFull && m.Schema == declcfg.SchemaBundle {
			var b declcfg.Bundle
			if err := json.Unmarshal(m.Blob, &b); err != nil {
				return fmt.Errorf("parse bundle: %w", err)
			}
			for _, p := range b.Properties {
				if p.Type == property.TypePackage {
					b.Properties = []property.Property{p} // a new array: the others are freed
					break
				}
			}
			if len(b.Properties) > 1 {
				b.Properties = nil
			}
			if mode == readSelect {
				b.RelatedImages = nil
			}
			c.Bundles = append(c.Bundles, b)
			return nil
		}
		part, err := declcfg.LoadSlice([]*declcfg.Meta{m})
		if err != nil {
			return err
		}
		c.Merge(part)
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
