package mirror

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxArchiveSize is the largest archive part size accepted, in GiB (archiveSize,
// --archive-size): larger parts fit no removable medium, and the byte count must not overflow.
const MaxArchiveSize = 1024

// ISC API identity (oc-mirror v2).
const (
	ISCAPIVersion = "mirror.openshift.io/v2alpha1"
	ISCKind       = "ImageSetConfiguration"
)

// ImageSetConfig is oc-mirror v2's ImageSetConfiguration, as users already write it.
type ImageSetConfig struct {
	APIVersion  string    `yaml:"apiVersion"`
	Kind        string    `yaml:"kind"`
	ArchiveSize int       `yaml:"archiveSize,omitempty"` // GiB per archive (to-dir)
	Mirror      ISCMirror `yaml:"mirror"`
	File        string    `yaml:"-"`
	// lines maps a field path ("mirror.operators[0].packages[1]") to its line in File.
	lines map[string]int
}

// ISCMirror is the mirror section.
type ISCMirror struct {
	Platform         ISCPlatform   `yaml:"platform,omitempty"`
	Operators        []ISCOperator `yaml:"operators,omitempty"`
	AdditionalImages []ISCImage    `yaml:"additionalImages,omitempty"`
	BlockedImages    []ISCImage    `yaml:"blockedImages,omitempty"`
}

// ISCPlatform selects OpenShift releases.
type ISCPlatform struct {
	// Release is one release image by tag or digest (oc-mirror v2's platform.release).
	Release       string       `yaml:"release,omitempty"`
	Channels      []ISCChannel `yaml:"channels,omitempty"`
	Architectures []string     `yaml:"architectures,omitempty"`
	Graph         bool         `yaml:"graph,omitempty"`
}

// ISCChannel is a release channel range.
type ISCChannel struct {
	Name         string `yaml:"name"`
	MinVersion   string `yaml:"minVersion,omitempty"`
	MaxVersion   string `yaml:"maxVersion,omitempty"`
	Type         string `yaml:"type,omitempty"`
	ShortestPath bool   `yaml:"shortestPath,omitempty"`
	Full         bool   `yaml:"full,omitempty"`
}

// ISCOperator is one operator catalog and the packages to keep from it.
type ISCOperator struct {
	Catalog       string       `yaml:"catalog"`
	Full          bool         `yaml:"full,omitempty"`
	Packages      []ISCPackage `yaml:"packages,omitempty"`
	TargetCatalog string       `yaml:"targetCatalog,omitempty"`
	TargetTag     string       `yaml:"targetTag,omitempty"`
}

// ISCPackage selects bundles of one package.
type ISCPackage struct {
	Name           string              `yaml:"name"`
	DefaultChannel string              `yaml:"defaultChannel,omitempty"`
	Channels       []ISCPackageChannel `yaml:"channels,omitempty"`
	MinVersion     string              `yaml:"minVersion,omitempty"`
	MaxVersion     string              `yaml:"maxVersion,omitempty"`
}

// ISCPackageChannel selects bundles of one channel.
type ISCPackageChannel struct {
	Name       string `yaml:"name"`
	MinVersion string `yaml:"minVersion,omitempty"`
	MaxVersion string `yaml:"maxVersion,omitempty"`
}

// ISCImage names one image.
type ISCImage struct {
	Name string `yaml:"name"`
}

var unknownField = regexp.MustCompile(`line (\d+): field (\S+) not found in type mirror\.(\S+)`)

// LoadISC reads and checks an ImageSetConfiguration. Fields oc-mirror knows but this tool does not
// support yet are reported by name and line, never silently ignored; every problem is returned.
func LoadISC(path string) (*ImageSetConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var c ImageSetConfig
	if err := dec.Decode(&c); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			msgs := []string{}
			for _, m := range te.Errors {
				if s := unknownField.FindStringSubmatch(m); s != nil {
					msgs = append(msgs, fmt.Sprintf("%s:%s: field %q (in %s) is not supported; remove it or file an issue", path, s[1], s[2], s[3]))
				} else {
					msgs = append(msgs, path+": "+m)
				}
			}
			return nil, errors.New(strings.Join(msgs, "\n"))
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var second yaml.Node
	if err := dec.Decode(&second); err == nil {
		return nil, fmt.Errorf("%s:%d: a second YAML document; an ImageSetConfiguration file holds one document: remove the \"---\" and what follows, or put it in a file of its own", path, max(second.Line, docStart(second)))
	} else if !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err == nil {
		c.lines = map[string]int{}
		fieldLines(&root, "", c.lines)
	}
	c.File = path
	return &c, c.Validate()
}

// docStart is the first line of a document node's content.
func docStart(n yaml.Node) int {
	if len(n.Content) > 0 {
		return n.Content[0].Line
	}
	return n.Line
}

// fieldLines records the line of every mapping value and sequence item under n, by field path.
func fieldLines(n *yaml.Node, path string, lines map[string]int) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			fieldLines(c, path, lines)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := n.Content[i].Value
			if path != "" {
				p = path + "." + p
			}
			lines[p] = n.Content[i].Line
			fieldLines(n.Content[i+1], p, lines)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			lines[p] = c.Line
			fieldLines(c, p, lines)
		}
	}
}

// At names a field of the configuration for an error message: "isc.yaml:12: mirror.operators[0]"
// (without the line when the configuration was not read from a file).
func (c *ImageSetConfig) At(path string) string {
	if l := c.lines[path]; l > 0 {
		return fmt.Sprintf("%s:%d: %s", c.File, l, path)
	}
	if c.File != "" {
		return c.File + ": " + path
	}
	return path
}

// Validate checks semantic rules, returning every problem at once with its field path.
func (c *ImageSetConfig) Validate() error {
	var errs []string
	add := func(f string, a ...any) { errs = append(errs, c.File+": "+fmt.Sprintf(f, a...)) }
	if c.APIVersion != ISCAPIVersion {
		add("apiVersion: %q, want %q", c.APIVersion, ISCAPIVersion)
	}
	if c.Kind != ISCKind {
		add("kind: %q, want %q", c.Kind, ISCKind)
	}
	if c.ArchiveSize < 0 || c.ArchiveSize > MaxArchiveSize {
		add("archiveSize: %d; want a size in GiB from 1 to %d (4, say) or none", c.ArchiveSize, MaxArchiveSize)
	}
	if c.Mirror.Platform.Graph {
		add("mirror.platform.graph: building the update graph image is not supported yet; remove it or set it to false")
	}
	for i, ch := range c.Mirror.Platform.Channels {
		for _, e := range validateChannel(i, ch) {
			add("%s", e)
		}
	}
	for _, a := range c.Mirror.Platform.Architectures {
		if _, ok := releaseArch(a); !ok {
			add("mirror.platform.architectures: %q is not one of amd64, arm64, ppc64le, s390x, multi", a)
		}
	}
	for _, e := range c.validateOperators() {
		errs = append(errs, e)
	}
	for i, im := range c.Mirror.AdditionalImages {
		if im.Name == "" {
			add("mirror.additionalImages[%d].name: required", i)
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// NamedImages returns the images the configuration names directly, without resolving anything:
// the release image, each channel's lowest named version (for the first architecture), the
// catalogs and the additional images. Preflight reads one of them per registry.
func (c *ImageSetConfig) NamedImages() []string {
	var out []string
	if c.Mirror.Platform.Release != "" {
		out = append(out, c.Mirror.Platform.Release)
	}
	arch := "x86_64"
	if len(c.Mirror.Platform.Architectures) > 0 {
		arch, _ = releaseArch(c.Mirror.Platform.Architectures[0])
	}
	for _, ch := range c.Mirror.Platform.Channels {
		if v := ch.MinVersion; v != "" {
			out = append(out, DefaultReleaseRepo+":"+v+"-"+arch)
		} else if v := ch.MaxVersion; v != "" {
			out = append(out, DefaultReleaseRepo+":"+v+"-"+arch)
		}
	}
	for _, op := range c.Mirror.Operators {
		out = append(out, op.Catalog)
	}
	for _, a := range c.Mirror.AdditionalImages {
		out = append(out, a.Name)
	}
	return out
}

// releaseArch maps an oc-mirror architecture name to the release tag suffix.
func releaseArch(a string) (string, bool) {
	switch a {
	case "amd64":
		return "x86_64", true
	case "arm64":
		return "aarch64", true
	case "ppc64le", "s390x", "multi":
		return a, true
	}
	return "", false
}
