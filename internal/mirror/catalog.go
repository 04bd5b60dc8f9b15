package mirror

import (
	"context"
	"fmt"
	"sort"
	"strings"

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
func ReadCatalog(ctx context.Context, image, plat string, o Options, packages ...string) (*Catalog, error) {
	rc, err := newClient(o, hostsOf([]Image{{Source: image}})...)
	if err != nil {
		return nil, err
	}
	r, err := readRef(image, o.SourceRegistry)
	if err != nil {
		return nil, err
	}
	var c *Catalog
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
func readCatalog(ctx context.Context, rc *regclient.RegClient, r ref.Ref, image, plat string, packages []string) (*Catalog, error) {
	m, err := platformImage(ctx, rc, r, plat)
	if err != nil {
		return nil, fmt.Errorf("catalog %s: %w", image, err)
	}
	cd, err := m.(manifest.Imager).GetConfig()
	if err != nil {
		return nil, err
	}
	cfg, err := rc.BlobGetOCIConfig(ctx, r, cd)
	if err != nil {
		return nil, fmt.Errorf("catalog %s: config: %w", image, err)
	}
	dir := cfg.GetConfig().Config.Labels[ConfigsLabel]
	if dir == "" {
		return nil, permanent(fmt.Errorf("catalog %s: no %s label; is it a file-based catalog?", image, ConfigsLabel))
	}
	prefix := strings.Trim(dir, "/") + "/"
	c := &Catalog{}
	if len(packages) > 0 {
		c.only = map[string]bool{}
		for _, p := range packages {
			c.only[p] = true
		}
	}
	err = scanImageFiles(ctx, rc, r, plat, func(name string) bool {
		return strings.HasPrefix(name, prefix) && (strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml"))
	}, func(name string, data []byte) (bool, error) {
		return true, c.ParseFBC(name, data)
	})
	if err != nil {
		return nil, fmt.Errorf("catalog %s: %w", image, err)
	}
	if len(c.Packages) == 0 {
		return nil, permanent(fmt.Errorf("catalog %s: no packages under %s", image, dir))
	}
	return c, nil
}

// Selection is what a filter keeps: package → channel → bundle names.
type Selection map[string]map[string]map[string]bool

// Select applies oc-mirror v2's rules for one catalog entry of an ImageSetConfiguration:
//
//   - no packages, full false: each package's default-channel head (one bundle per package);
//   - no packages, full true: every bundle of every channel;
//   - a package with neither channels nor versions: the head of its default channel (oc-mirror
//     v1 took every channel's head; v2 takes only the default channel, which is the rule here);
//   - a package with full true: every bundle of every channel of that package;
//   - a package with minVersion/maxVersion: the default channel's bundles in the range; a
//     maxVersion below the channel head drops the head, and the kept bundle with the highest
//     version becomes the filtered channel's head;
//   - listed channels: per channel, its head, or its bundles in the channel's range, or all of
//     them with full true; the package's defaultChannel is kept only if selected, else the
//     configured defaultChannel (or the first selected channel by name) replaces it.
//
// An empty range is an error naming the package and channel, not a silent empty mirror.
func Select(c *Catalog, op ISCOperator) (Selection, error) {
	sel := Selection{}
	add := func(p *Package, ch, b string) {
		if sel[p.Name] == nil {
			sel[p.Name] = map[string]map[string]bool{}
		}
		if sel[p.Name][ch] == nil {
			sel[p.Name][ch] = map[string]bool{}
		}
		sel[p.Name][ch][b] = true
	}
	pick := func(p *Package, chName, minV, maxV string, full bool) error {
		ch := p.Channels[chName]
		if ch == nil {
			return fmt.Errorf("package %s: no channel %q (has %s)", p.Name, chName, strings.Join(sortedKeys(p.Channels), ", "))
		}
		if !full && minV == "" && maxV == "" {
			add(p, chName, p.Head(ch))
			return nil
		}
		n := 0
		for _, e := range ch.Entries {
			v := p.version(e.Name)
			if minV != "" && compareVersions(v, minV) < 0 || maxV != "" && compareVersions(v, maxV) > 0 {
				continue
			}
			add(p, chName, e.Name)
			n++
		}
		if n == 0 {
			return fmt.Errorf("package %s channel %s: no bundle between minVersion %q and maxVersion %q", p.Name, chName, minV, maxV)
		}
		return nil
	}
	if len(op.Packages) == 0 {
		for _, name := range sortedKeys(c.Packages) {
			p := c.Packages[name]
			chans := []string{p.DefaultChannel}
			if op.Full {
				chans = sortedKeys(p.Channels)
			}
			for _, ch := range chans {
				if err := pick(p, ch, "", "", op.Full); err != nil {
					return nil, err
				}
			}
		}
		return sel, nil
	}
	for _, ip := range op.Packages {
		p := c.Packages[ip.Name]
		if p == nil {
			return nil, fmt.Errorf("catalog %s: no package %q", op.Catalog, ip.Name)
		}
		switch {
		case len(ip.Channels) > 0:
			for _, ch := range ip.Channels {
				if err := pick(p, ch.Name, ch.MinVersion, ch.MaxVersion, op.Full); err != nil {
					return nil, err
				}
			}
		case op.Full:
			for _, ch := range sortedKeys(p.Channels) {
				if err := pick(p, ch, "", "", true); err != nil {
					return nil, err
				}
			}
		default:
			if err := pick(p, p.DefaultChannel, ip.MinVersion, ip.MaxVersion, false); err != nil {
				return nil, err
			}
		}
	}
	return sel, nil
}

// Images returns the selection's bundle images and every related image, deduplicated and sorted.
func (s Selection) Images(c *Catalog) []string {
	set := map[string]bool{}
	for pkg, chans := range s {
		p := c.Packages[pkg]
		for _, bundles := range chans {
			for b := range bundles {
				bd := p.Bundles[b]
				if bd == nil {
					continue
				}
				set[bd.Image] = true
				for _, ri := range bd.RelatedImages {
					if ri.Image != "" {
						set[ri.Image] = true
					}
				}
			}
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
