package mirror

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/yamlstrict"
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
	APIVersion  string    `yaml:"apiVersion" max:"128"`
	Kind        string    `yaml:"kind" max:"128"`
	ArchiveSize int       `yaml:"archiveSize,omitempty"` // GiB per archive (to-dir)
	Mirror      ISCMirror `yaml:"mirror"`
	File        string    `yaml:"-"`
	// pos maps a field path ("mirror.operators[0].packages[1]") to where it is written in File.
	pos map[string]finding.Position
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
	Release       string       `yaml:"release,omitempty" max:"1024"`
	Channels      []ISCChannel `yaml:"channels,omitempty"`
	Architectures []string     `yaml:"architectures,omitempty" max:"32"`
	Graph         bool         `yaml:"graph,omitempty"`
}

// ISCChannel is a release channel range.
type ISCChannel struct {
	Name         string `yaml:"name" max:"253"`
	MinVersion   string `yaml:"minVersion,omitempty" max:"128"`
	MaxVersion   string `yaml:"maxVersion,omitempty" max:"128"`
	Type         string `yaml:"type,omitempty" max:"32"`
	ShortestPath bool   `yaml:"shortestPath,omitempty"`
	Full         bool   `yaml:"full,omitempty"`
}

// ISCOperator is one operator catalog and the packages to keep from it.
type ISCOperator struct {
	Catalog       string       `yaml:"catalog" max:"1024"`
	Full          bool         `yaml:"full,omitempty"`
	Packages      []ISCPackage `yaml:"packages,omitempty"`
	TargetCatalog string       `yaml:"targetCatalog,omitempty" max:"1024"`
	TargetTag     string       `yaml:"targetTag,omitempty" max:"128"`
}

// ISCPackage selects bundles of one package.
type ISCPackage struct {
	Name           string              `yaml:"name" max:"253"`
	DefaultChannel string              `yaml:"defaultChannel,omitempty" max:"253"`
	Channels       []ISCPackageChannel `yaml:"channels,omitempty"`
	MinVersion     string              `yaml:"minVersion,omitempty" max:"128"`
	MaxVersion     string              `yaml:"maxVersion,omitempty" max:"128"`
}

// ISCPackageChannel selects bundles of one channel.
type ISCPackageChannel struct {
	Name       string `yaml:"name" max:"253"`
	MinVersion string `yaml:"minVersion,omitempty" max:"128"`
	MaxVersion string `yaml:"maxVersion,omitempty" max:"128"`
}

// ISCImage names one image. Lengths are capped (`max` tags, checked while decoding): an image
// reference is at most 1024 characters, a package or channel name 253 (a DNS subdomain).
type ISCImage struct {
	Name string `yaml:"name" max:"1024"`
}

// ISCError is an invalid ImageSetConfiguration: every problem found, each with file:line:column,
// field path, what is wrong and (where there is one) how to fix it, in the site profile's form.
type ISCError struct {
	Problems finding.List
}

// Error lists every problem, one per line.
func (e *ISCError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// AsISCProblems returns the problems carried by err, if it is (or wraps) an *ISCError.
func AsISCProblems(err error) (finding.List, bool) {
	var e *ISCError
	if errors.As(err, &e) {
		return e.Problems, true
	}
	return nil, false
}

// LoadISC reads and checks an ImageSetConfiguration. Like oc-mirror it refuses fields it does not
// know by name and line (never silently ignored) and a second YAML document; unlike it, it reads
// on after a problem: every problem is returned at once as an *ISCError.
func LoadISC(path string) (*ImageSetConfig, error) {
	b, err := fsroot.ReadFile(path, fsroot.ISC)
	if err != nil {
		return nil, err
	}
	c := ImageSetConfig{File: path}
	one := func(line, col int, msg, remedy string) error {
		return &ISCError{finding.List{{Status: finding.Fail, Position: finding.Position{File: path, Line: line, Column: col},
			Message: msg, Remedy: remedy}}}
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, one(1, 1, "the file is empty", "write an ImageSetConfiguration (apiVersion: "+ISCAPIVersion+", kind: "+ISCKind+", mirror: ...)")
		}
		return nil, one(yamlstrict.ErrorLine(err), 0, "the file is not valid YAML: "+yamlstrict.ErrorText(err),
			"fix the YAML syntax at that line (indentation, a missing ':' or an unclosed quote)")
	}
	var second yaml.Node
	if err := dec.Decode(&second); err == nil {
		return nil, fmt.Errorf("%s:%d: a second YAML document; an ImageSetConfiguration file holds one document: remove the \"---\" and what follows, or put it in a file of its own", path, max(second.Line, docStart(second)))
	} else if !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r := yamlstrict.Decode(&root, path, &c, yamlstrict.Options{})
	c.pos = r.Pos
	probs := r.Problems
	for i, p := range probs {
		// oc-mirror's wording: the field is named, with its line.
		if name, ok := strings.CutPrefix(p.Message, "unknown field "); ok {
			probs[i].Message = "field " + name + " is not supported"
		}
	}
	bad := map[string]bool{} // fields the decoder could not read: no "required" on top of "expected a string"
	for _, p := range probs {
		bad[p.Path] = true
	}
	for _, p := range c.problems() {
		if !bad[p.Path] {
			probs = append(probs, p)
		}
	}
	if len(probs) > 0 {
		probs.Sort()
		return &c, &ISCError{probs}
	}
	return &c, nil
}

// docStart is the first line of a document node's content.
func docStart(n yaml.Node) int {
	if len(n.Content) > 0 {
		return n.Content[0].Line
	}
	return n.Line
}

// position is where the field at path, or the nearest enclosing one written, is in File.
func (c *ImageSetConfig) position(path string) finding.Position {
	for p := path; ; {
		if at, ok := c.pos[p]; ok {
			return at
		}
		if p == "" {
			return finding.Position{File: c.File}
		}
		i := max(strings.LastIndexAny(p, ".["), 0)
		p = p[:i]
	}
}

// problem is one semantic problem at path; text is "message" or "message; remedy".
func (c *ImageSetConfig) problem(path, text string) finding.Finding {
	msg, remedy, _ := strings.Cut(text, "; ")
	return finding.Finding{Status: finding.Fail, Position: c.position(path), Path: path, Message: msg, Remedy: remedy}
}

// At names a field of the configuration for an error message: "isc.yaml:12: mirror.operators[0]"
// (without the line when the configuration was not read from a file).
func (c *ImageSetConfig) At(path string) string {
	if p, ok := c.pos[path]; ok && p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", c.File, p.Line, path)
	}
	if c.File != "" {
		return c.File + ": " + path
	}
	return path
}

// Validate checks semantic rules, returning every problem at once (an *ISCError) with its field path.
func (c *ImageSetConfig) Validate() error {
	if ps := c.problems(); len(ps) > 0 {
		ps.Sort()
		return &ISCError{ps}
	}
	return nil
}

// problems checks semantic rules, returning every problem with its field path and position.
func (c *ImageSetConfig) problems() finding.List {
	var ps finding.List
	add := func(path, f string, a ...any) { ps = append(ps, c.problem(path, fmt.Sprintf(f, a...))) }
	if c.APIVersion != ISCAPIVersion {
		add("apiVersion", "%q is not supported; want apiVersion: %s", c.APIVersion, ISCAPIVersion)
	}
	if c.Kind != ISCKind {
		add("kind", "%q is not supported; want kind: %s", c.Kind, ISCKind)
	}
	if c.ArchiveSize < 0 || c.ArchiveSize > MaxArchiveSize {
		add("archiveSize", "%d is out of range; want a size in GiB from 1 to %d (4, say) or none", c.ArchiveSize, MaxArchiveSize)
	}
	for i, ch := range c.Mirror.Platform.Channels {
		for _, e := range validateChannel(i, ch) {
			path, msg, _ := strings.Cut(e, ": ")
			ps = append(ps, c.problem(path, msg))
		}
	}
	for i, a := range c.Mirror.Platform.Architectures {
		if _, ok := releaseArch(a); !ok {
			add(fmt.Sprintf("mirror.platform.architectures[%d]", i), "%q is not one of amd64, arm64, ppc64le, s390x, multi; write one of them", a)
		}
	}
	ps = append(ps, c.validateOperators()...)
	for i, im := range c.Mirror.AdditionalImages {
		if im.Name == "" {
			add(fmt.Sprintf("mirror.additionalImages[%d].name", i), "required; write the image reference (registry.redhat.io/ubi9/ubi:latest, say)")
		}
	}
	return ps
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
