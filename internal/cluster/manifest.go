package cluster

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
)

// ManifestError says which document of which file could not be used, and why.
type ManifestError struct {
	File string
	// Doc is the 1-based index of the YAML document in the file; Line its first line.
	Doc, Line int
	Err       error
}

func (e *ManifestError) Error() string {
	return fmt.Sprintf("%s:%d (document %d): %v", e.File, e.Line, e.Doc, e.Err)
}

func (e *ManifestError) Unwrap() error { return e.Err }

// Decode splits a multi-document YAML (or JSON) stream into objects. Empty documents are skipped;
// List kinds are flattened. file is used in errors only.
func Decode(file string, data []byte) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	line := 1
	for doc := 1; ; doc++ {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, &ManifestError{File: file, Doc: doc, Line: line, Err: err}
		}
		start := line
		line += bytes.Count(raw, []byte("\n"))
		if len(bytes.TrimSpace(stripComments(raw))) == 0 {
			continue
		}
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return nil, &ManifestError{File: file, Doc: doc, Line: start, Err: err}
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, &ManifestError{File: file, Doc: doc, Line: start, Err: fmt.Errorf("%w (every document needs apiVersion and kind)", err)}
		}
		if u.IsList() {
			l, err := u.ToList()
			if err != nil {
				return nil, &ManifestError{File: file, Doc: doc, Line: start, Err: err}
			}
			for i := range l.Items {
				out = append(out, &l.Items[i])
			}
			continue
		}
		if u.GetAPIVersion() == "" || u.GetKind() == "" {
			return nil, &ManifestError{File: file, Doc: doc, Line: start, Err: errors.New("apiVersion or kind is empty: every document needs both")}
		}
		if u.GetName() == "" {
			return nil, &ManifestError{File: file, Doc: doc, Line: start, Err: errors.New("metadata.name is empty: every object needs a name")}
		}
		out = append(out, u)
	}
}

// ReadFiles decodes every file in order; a missing file is an error.
func ReadFiles(files ...string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, f := range files {
		data, err := fsroot.ReadFile(f, fsroot.Manifest)
		if err != nil {
			return nil, fmt.Errorf("read manifest: %w", err)
		}
		objs, err := Decode(f, data)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// Glob returns the sorted files matching pattern (no error when none match).
func Glob(pattern string) ([]string, error) {
	m, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("glob %s: %w", pattern, err)
	}
	sort.Strings(m)
	return m, nil
}

func stripComments(b []byte) []byte {
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") || t == "---" {
			continue
		}
		keep = append(keep, l)
	}
	return []byte(strings.Join(keep, "\n"))
}
