package site

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"

	"go.yaml.in/yaml/v3"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/yamlstrict"
)

// Parse decodes a profile from data strictly (internal/yamlstrict, the module's one strict
// decoder): unknown fields, wrong types and duplicate keys are problems, each with file (as
// given), line, column and field path. It does not apply defaults, resolve paths or validate;
// Load does all of that.
func Parse(data []byte, file string) (*Site, error) {
	s := &Site{src: file, pos: map[string]finding.Position{}}
	one := func(line, col int, msg, remedy string) error {
		return Invalid(finding.List{{Position: finding.Position{File: file, Line: line, Column: col}, Status: finding.Fail, Message: msg, Remedy: remedy}})
	}
	root, second, err := parseYAML(data)
	if second > 0 {
		return s, one(second, 1, "a profile holds one YAML document; a second one starts here",
			"remove the second document, or split it into its own file")
	}
	if err != nil {
		return s, one(yamlstrict.ErrorLine(err), 0, "the file is not valid YAML: "+yamlstrict.ErrorText(err),
			"fix the YAML syntax at that line (indentation, a missing ':' or an unclosed quote)")
	}
	if root == nil || len(root.Content) == 0 {
		return s, one(1, 1, "the file is empty", "start from `bootstrap init --profile NAME`")
	}
	r := yamlstrict.Decode(root.Content[0], file, s, yamlstrict.Options{Extensions: true, Inline: inlineSecret})
	s.pos = r.Pos
	probs := make(finding.List, 0, len(r.Problems))
	for _, p := range r.Problems {
		probs = append(probs, finding.Finding{Position: p.Position, Path: p.Path, Status: finding.Fail, Message: p.Message, Remedy: p.Remedy})
	}
	probs = unique(probs)
	if len(probs) > 0 && !r.Hard {
		return s, &softErrors{probs}
	}
	return s, Invalid(probs)
}

var secretRefType = reflect.TypeOf(SecretRef{})

// inlineSecret is the problem of a secret reference written as a value. It never echoes the
// value: it may be the password itself.
func inlineSecret(t reflect.Type) (msg, remedy string, ok bool) {
	if t != secretRefType {
		return "", "", false
	}
	return "a secret is given inline; secrets are references, never values",
		"write `{file: PATH}` (a file with mode 0600) or `{env: NAME}` (an environment variable), and remove the value from this file", true
}

// parseYAML parses exactly one document; second is the line of a second document, if any. The
// yaml library's own panics (none known in v3.0.1, but it is third-party code fed untrusted
// bytes) become errors rather than crashing a run.
func parseYAML(data []byte) (doc *yaml.Node, second int, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc, err = nil, fmt.Errorf("yaml parser failed: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var n yaml.Node
	if err := dec.Decode(&n); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, 0, nil
		}
		return nil, 0, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, max(extra.Line, 1), nil
	} else if !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	return &n, 0, nil
}

func joinPath(parent, name string) string { return yamlstrict.JoinPath(parent, name) }

func structFields(t reflect.Type) map[string]int { return yamlstrict.StructFields(t) }
