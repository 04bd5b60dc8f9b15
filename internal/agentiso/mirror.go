package agentiso

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/mirror"
)

// MirrorOutputs are the files the mirror stage leaves in the work dir, as the iso stage uses them.
type MirrorOutputs struct {
	// DigestSources come from idms-oc-mirror.yaml (ImageDigestMirrorSets) and go into install-config.
	DigestSources []ImageDigestSource
	// TagMirrors is itms-oc-mirror.yaml verbatim (ImageTagMirrorSet); install-config has no field for tag
	// mirrors, so it goes into openshift/ as a day-1 manifest. Empty when absent.
	TagMirrors []byte
	// CatalogSources are cs-*.yaml verbatim, by file name, sorted.
	CatalogSources []NamedFile
}

// NamedFile is a file's base name and contents.
type NamedFile struct {
	Name string
	Data []byte
}

// LoadMirrorOutputs reads the mirror stage's files from dir, under oc-mirror v2's names
// (mirror.IDMSFile, mirror.ITMSFile, mirror.CatalogSourcePattern). Missing files
// are not an error (the mirror stage may not have run, or the site needs no operators); a file that
// is present but malformed is, naming the file and what is wrong.
func LoadMirrorOutputs(dir string) (*MirrorOutputs, error) {
	out := &MirrorOutputs{}
	idms := filepath.Join(dir, mirror.IDMSFile)
	data, err := fsroot.ReadFile(idms, fsroot.Manifest)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("read mirror output: %w", err)
	default:
		out.DigestSources, err = parseIDMS(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", idms, err)
		}
	}
	itms := filepath.Join(dir, mirror.ITMSFile)
	data, err = fsroot.ReadFile(itms, fsroot.Manifest)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("read mirror output: %w", err)
	default:
		if err := checkManifests(data, "ImageTagMirrorSet"); err != nil {
			return nil, fmt.Errorf("%s: %w", itms, err)
		}
		out.TagMirrors = data
	}
	names, err := filepath.Glob(filepath.Join(dir, mirror.CatalogSourcePattern))
	if err != nil {
		return nil, fmt.Errorf("list catalog sources: %w", err)
	}
	sort.Strings(names)
	for _, n := range names {
		data, err := fsroot.ReadFile(n, fsroot.Manifest)
		if err != nil {
			return nil, fmt.Errorf("read mirror output: %w", err)
		}
		if err := checkManifests(data, "CatalogSource"); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		out.CatalogSources = append(out.CatalogSources, NamedFile{Name: filepath.Base(n), Data: data})
	}
	return out, nil
}

type idmsDoc struct {
	Kind string `yaml:"kind"`
	Spec struct {
		ImageDigestMirrors []ImageDigestSource `yaml:"imageDigestMirrors"`
	} `yaml:"spec"`
}

// parseIDMS reads one or more ImageDigestMirrorSet documents and merges their mirrors, keeping
// the order of first appearance so the rendered install-config is stable.
func parseIDMS(data []byte) ([]ImageDigestSource, error) {
	var out []ImageDigestSource
	index := map[string]int{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for n := 1; ; n++ {
		var doc idmsDoc
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		if doc.Kind != "ImageDigestMirrorSet" {
			return nil, fmt.Errorf("document %d: kind %q, want ImageDigestMirrorSet", n, doc.Kind)
		}
		for _, m := range doc.Spec.ImageDigestMirrors {
			if m.Source == "" || len(m.Mirrors) == 0 {
				return nil, fmt.Errorf("document %d: an imageDigestMirrors entry lacks source or mirrors", n)
			}
			i, ok := index[m.Source]
			if !ok {
				index[m.Source] = len(out)
				out = append(out, ImageDigestSource{Source: m.Source, Mirrors: append([]string(nil), m.Mirrors...)})
				continue
			}
			for _, mm := range m.Mirrors {
				if !contains(out[i].Mirrors, mm) {
					out[i].Mirrors = append(out[i].Mirrors, mm)
				}
			}
		}
	}
	return out, nil
}

// checkManifests makes sure every document in data is a Kubernetes object of the given kind.
func checkManifests(data []byte, kind string) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for n := 1; ; n++ {
		var doc struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Metadata   struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
		}
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			if n == 1 {
				return errors.New("no YAML document")
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("document %d: %w", n, err)
		}
		if doc.APIVersion == "" || doc.Metadata.Name == "" {
			return fmt.Errorf("document %d: not a Kubernetes object (apiVersion and metadata.name are required)", n)
		}
		if kind != "" && doc.Kind != kind {
			return fmt.Errorf("document %d: kind %q, want %s", n, doc.Kind, kind)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// MirrorReleaseImage maps a release image given by digest to its mirror through the digest
// sources ("quay.io/openshift-release-dev/ocp-release@sha256:..." → "<mirror>@sha256:...").
// It returns "" when the image is not by digest or no source matches.
func MirrorReleaseImage(image string, sources []ImageDigestSource) string {
	return MirrorImage(image, sources)
}

// MirrorImage maps any image given by digest (a release component) to its mirror through the
// digest sources; "" when the image is not by digest or no source matches.
func MirrorImage(image string, sources []ImageDigestSource) string {
	repo, digest, ok := strings.Cut(image, "@")
	if !ok || !strings.HasPrefix(digest, "sha256:") {
		return ""
	}
	for _, s := range sources {
		if s.Source == repo && len(s.Mirrors) > 0 {
			return s.Mirrors[0] + "@" + digest
		}
	}
	return ""
}
