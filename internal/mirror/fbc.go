package mirror

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// FBC schemas.
const (
	schemaPackage      = "olm.package"
	schemaChannel      = "olm.channel"
	schemaBundle       = "olm.bundle"
	schemaDeprecations = "olm.deprecations"
)

// Catalog is a parsed file-based catalog: the documents of each package, kept raw so a filtered
// catalog can be written back without losing fields this code does not model.
type Catalog struct {
	Packages map[string]*Package
	only     map[string]bool // when set, documents of other packages are skipped while parsing
}

// Package is one operator package of a catalog.
type Package struct {
	Name           string
	DefaultChannel string
	Channels       map[string]*Channel
	Bundles        map[string]*Bundle
	raw            json.RawMessage   // the olm.package document
	deprecations   []json.RawMessage // olm.deprecations documents
	others         []json.RawMessage // any other schema, kept as is
}

// Channel is one upgrade channel.
type Channel struct {
	Name    string `json:"name"`
	Entries []struct {
		Name      string   `json:"name"`
		Replaces  string   `json:"replaces,omitempty"`
		Skips     []string `json:"skips,omitempty"`
		SkipRange string   `json:"skipRange,omitempty"`
	} `json:"entries"`
	raw json.RawMessage
}

// Bundle is one operator version.
type Bundle struct {
	Name          string `json:"name"`
	Image         string `json:"image"`
	RelatedImages []struct {
		Name  string `json:"name"`
		Image string `json:"image"`
	} `json:"relatedImages"`
	Properties []struct {
		Type  string          `json:"type"`
		Value json.RawMessage `json:"value"`
	} `json:"properties"`
	Version string `json:"-"`
	raw     json.RawMessage
}

type meta struct {
	Schema         string `json:"schema"`
	Package        string `json:"package"`
	Name           string `json:"name"`
	DefaultChannel string `json:"defaultChannel"`
}

// ParseFBC adds the documents of one catalog file (a JSON stream or YAML documents) to c.
func (c *Catalog) ParseFBC(name string, data []byte) error {
	if c.Packages == nil {
		c.Packages = map[string]*Package{}
	}
	docs, err := splitDocs(name, data)
	if err != nil {
		return err
	}
	for i, raw := range docs {
		var m meta
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("%s: document %d: %w", name, i+1, err)
		}
		pkgName := m.Package
		if m.Schema == schemaPackage {
			pkgName = m.Name
		}
		if pkgName == "" || c.only != nil && !c.only[pkgName] {
			continue // not ours to filter (unknown schema without a package) or not selected
		}
		p := c.Packages[pkgName]
		if p == nil {
			p = &Package{Name: pkgName, Channels: map[string]*Channel{}, Bundles: map[string]*Bundle{}}
			c.Packages[pkgName] = p
		}
		switch m.Schema {
		case schemaPackage:
			p.DefaultChannel, p.raw = m.DefaultChannel, raw
		case schemaChannel:
			ch := &Channel{raw: raw}
			if err := json.Unmarshal(raw, ch); err != nil {
				return fmt.Errorf("%s: channel %s: %w", name, m.Name, err)
			}
			p.Channels[ch.Name] = ch
		case schemaBundle:
			b := &Bundle{raw: raw}
			if err := json.Unmarshal(raw, b); err != nil {
				return fmt.Errorf("%s: bundle %s: %w", name, m.Name, err)
			}
			for _, pr := range b.Properties {
				if pr.Type == "olm.package" {
					var v struct {
						Version string `json:"version"`
					}
					_ = json.Unmarshal(pr.Value, &v)
					b.Version = v.Version
				}
			}
			p.Bundles[b.Name] = b
		case schemaDeprecations:
			p.deprecations = append(p.deprecations, raw)
		default:
			p.others = append(p.others, raw)
		}
	}
	return nil
}

// splitDocs returns each document of a JSON stream or YAML file as JSON.
func splitDocs(name string, data []byte) ([]json.RawMessage, error) {
	var out []json.RawMessage
	if strings.HasSuffix(name, ".json") {
		dec := json.NewDecoder(bytes.NewReader(data))
		for {
			var raw json.RawMessage
			if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
				return out, nil
			} else if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			out = append(out, raw)
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var v any
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if v == nil {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, b)
	}
}

// Head returns the channel's head: the entry no other entry replaces or skips (the highest version
// when a truncated graph has several).
func (p *Package) Head(ch *Channel) string {
	replaced := map[string]bool{}
	for _, e := range ch.Entries {
		replaced[e.Replaces] = true
		for _, s := range e.Skips {
			replaced[s] = true
		}
	}
	head := ""
	for _, e := range ch.Entries {
		if replaced[e.Name] {
			continue
		}
		if head == "" || compareVersions(p.version(e.Name), p.version(head)) > 0 {
			head = e.Name
		}
	}
	return head
}

func (p *Package) version(bundle string) string {
	if b := p.Bundles[bundle]; b != nil {
		return b.Version
	}
	return ""
}

// compareVersions compares semantic versions (a leading v is ignored); pre-releases sort before
// their release. Unparseable parts compare as strings.
func compareVersions(a, b string) int {
	split := func(v string) ([]string, string) {
		v = strings.TrimPrefix(v, "v")
		v, _, _ = strings.Cut(v, "+")
		core, pre, _ := strings.Cut(v, "-")
		return strings.Split(core, "."), pre
	}
	ac, ap := split(a)
	bc, bp := split(b)
	for i := 0; i < len(ac) || i < len(bc); i++ {
		var x, y string
		if i < len(ac) {
			x = ac[i]
		}
		if i < len(bc) {
			y = bc[i]
		}
		if c := comparePart(x, y); c != 0 {
			return c
		}
	}
	switch {
	case ap == bp:
		return 0
	case ap == "":
		return 1
	case bp == "":
		return -1
	}
	as, bs := strings.Split(ap, "."), strings.Split(bp, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if c := comparePart(as[i], bs[i]); c != 0 {
			return c
		}
	}
	return len(as) - len(bs)
}

func comparePart(x, y string) int {
	xi, ex := strconv.Atoi(x)
	yi, ey := strconv.Atoi(y)
	if ex == nil && ey == nil {
		return xi - yi
	}
	return strings.Compare(x, y)
}

// sortedBundles returns bundle names in version order.
func (p *Package) sortedBundles(names map[string]bool) []string {
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool {
		if c := compareVersions(p.version(out[i]), p.version(out[j])); c != 0 {
			return c < 0
		}
		return out[i] < out[j]
	})
	return out
}
