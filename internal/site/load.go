package site

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
)

// Load reads a profile: strict decode (unknown fields are errors), defaults filled, local paths
// resolved against the profile's directory ("~/" against the user's home). A decode problem is
// returned as *Errors (IsInvalid reports true) listing every problem with file:line:column.
// Load does not validate semantics; call Validate, or use LoadValidated.
func Load(path string) (*Site, error) {
	data, err := fsroot.ReadFile(path, fsroot.Profile)
	if err != nil {
		return nil, fmt.Errorf("read site profile: %w", err)
	}
	s, err := Parse(data, path)
	var soft *softErrors
	if err != nil && !errors.As(err, &soft) {
		return nil, err
	}
	// With unknown fields or duplicate keys only, the caller gets the site and the problems (an
	// invalid profile); LoadValidated goes on to validate the rest and reports them all at once.
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("read site profile: %w", err)
	}
	s.File = abs
	s.SetDefaults()
	s.resolvePaths(filepath.Dir(abs))
	if soft != nil {
		return s, soft
	}
	return s, nil
}

// softErrors are decode problems that leave every known value decoded (unknown fields, a key
// written twice): the profile is invalid, but can still be validated for the rest.
type softErrors struct{ probs finding.List }

func (e *softErrors) Error() string { return Invalid(e.probs).Error() }
func (e *softErrors) Unwrap() error { return Invalid(e.probs) }

// decodeProblems returns the soft decode problems of err, if that is what it is.
func decodeProblems(err error) (finding.List, bool) {
	var soft *softErrors
	if errors.As(err, &soft) {
		return soft.probs, true
	}
	return nil, false
}

// LoadValidated loads and validates a profile. It returns the site and its warnings; when any
// problem is an error, err is an *Errors holding them all (warnings included).
func LoadValidated(path string, opts ...Option) (*Site, finding.List, error) {
	s, err := Load(path)
	decoded, soft := decodeProblems(err)
	if err != nil && !soft {
		return nil, nil, err
	}
	// Every problem at once: the decode's unknown fields and duplicate keys with the rest.
	ps := folded(merged(append(decoded, s.Validate(opts...)...)))
	if err := Invalid(ps); err != nil {
		return s, ps, err
	}
	return s, ps, nil
}

// At returns where the value at a field path ("nodes[2].bmc.address") is written, falling back
// to the nearest enclosing field that is written (a defaulted value has no line of its own).
func (s *Site) At(path string) finding.Position {
	file := s.src
	if file == "" {
		file = s.File
	}
	if file == "" {
		file = "site profile" // a Site built in Go, not loaded from a file
	}
	for p := path; ; p = parentPath(p) {
		if pos, ok := s.pos[p]; ok {
			return pos
		}
		if p == "" {
			return finding.Position{File: file}
		}
	}
}

// parentPath strips the last segment: "a.b[2].c" → "a.b[2]" → "a.b" → "a" → "".
func parentPath(p string) string {
	if strings.HasSuffix(p, "]") {
		if i := strings.LastIndexByte(p, '['); i >= 0 {
			return p[:i]
		}
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return ""
}

// LocalPath is one local file or directory a profile names.
type LocalPath struct {
	Field string // field path, e.g. "nodes[0].bmc.password.file"
	Path  string // as resolved by Load (absolute, unless an "exec" program name looked up on PATH)
	Kind  string // "file", "dir", "exec" or "secret" (a file that must be mode 0600)
}

// LocalPaths lists every local file and directory the profile names, in document order, for
// preflight (exist and parse), the evidence report (hashes) and tests.
func (s *Site) LocalPaths() []LocalPath {
	fs := s.pathFields()
	out := make([]LocalPath, len(fs))
	for i, f := range fs {
		out[i] = LocalPath{Field: f.path, Path: f.v.String(), Kind: f.kind}
	}
	return out
}

// pathField is one field tagged `site:"..."`, found by walkPaths.
type pathField struct {
	path string // field path, e.g. "nodes[0].bmc.password.file"
	kind string // file, dir, exec, secret
	v    reflect.Value
}

// pathFields lists every non-empty tagged path field of the site in document order.
func (s *Site) pathFields() []pathField {
	var out []pathField
	walkPaths(reflect.ValueOf(s).Elem(), "", "", &out)
	return out
}

func walkPaths(v reflect.Value, path, kind string, out *[]pathField) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			walkPaths(v.Elem(), path, kind, out)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			walkPaths(v.Field(i), joinPath(path, name), f.Tag.Get("site"), out)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			walkPaths(v.Index(i), fmt.Sprintf("%s[%d]", path, i), kind, out)
		}
	case reflect.String:
		if kind != "" && v.String() != "" {
			*out = append(*out, pathField{path: path, kind: kind, v: v})
		}
	}
}

// resolvePaths makes every tagged path absolute. An "exec" field without a slash names a program
// looked up on PATH and is left alone.
func (s *Site) resolvePaths(dir string) {
	home, _ := os.UserHomeDir()
	for _, f := range s.pathFields() {
		p := f.v.String()
		if f.kind == "exec" && !strings.Contains(p, "/") {
			continue
		}
		f.v.SetString(resolvePath(dir, home, p))
	}
}

func resolvePath(dir, home, p string) string {
	switch {
	case p == "~" && home != "":
		return home
	case strings.HasPrefix(p, "~/") && home != "":
		return filepath.Join(home, p[2:])
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}
