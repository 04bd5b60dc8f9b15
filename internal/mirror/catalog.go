package mirror

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/operator-framework/operator-registry/alpha/declcfg"

	"github.com/regclient/regclient"
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
	rc, err := newClient(o, hostsOf([]Image{{Source: image}})...)
	if err != nil {
		return nil, err
	}
	r, err := readRef(image, o.SourceRegistry)
	if err != nil {
		return nil, err
	}
	var c *declcfg.DeclarativeConfig
	o = o.withRun()
	err = o.retry(ctx, []string{r.Registry}, func(ctx context.Context) error {
		var err error
		c, err = readCatalog(ctx, rc, r, image, plat, packages)
		return err
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// readCatalog is one attempt of ReadCatalog.
func readCatalog(ctx context.Context, rc *regclient.RegClient, r ref.Ref, image, plat string, packages []string) (*declcfg.DeclarativeConfig, error) {
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
	prefix := strings.Trim(dir, "/") + "/"
	var only map[string]bool
	if len(packages) > 0 {
		only = map[string]bool{}
		for _, p := range packages {
			only[p] = true
		}
	}
	c := &declcfg.DeclarativeConfig{}
	err = scanImageFiles(ctx, rc, r, plat, func(name string) bool {
		return strings.HasPrefix(name, prefix) && (strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml"))
	}, func(name string, rd io.Reader) (bool, error) {
		return true, parseFBC(c, name, rd, only)
	})
	if err != nil {
		return nil, err
	}
	if len(c.Packages) == 0 {
		return nil, permanent(fmt.Errorf("no packages under %s", dir))
	}
	return c, nil
}

// parseFBC adds the documents of one catalog file (a JSON stream or YAML documents) to c, as
// opm loads them, one document at a time from the stream: no document is kept raw beside its
// parsed form, and when only is set, documents of other packages are dropped as they are read, so
// memory follows the selection, not the catalog.
func parseFBC(c *declcfg.DeclarativeConfig, name string, r io.Reader, only map[string]bool) error {
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
