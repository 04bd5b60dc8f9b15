package site

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/bootstrap-dev/bootstrap/internal/suggest"
)

// maxNodes bounds the YAML nodes one decode visits, aliases expanded: a "billion laughs"
// document is refused instead of eating the jump host's memory.
const maxNodes = 100_000

// decoder walks a yaml.Node tree into the Go types strictly, recording the position of every
// value it meets and collecting every problem instead of stopping at the first.
type decoder struct {
	file    string
	probs   Problems
	pos     map[string]Position
	visited int
	aborted bool
	// hard is set by any problem after which the decoded values cannot be trusted (a wrong type,
	// invalid YAML); unknown fields and duplicate keys leave every known value decoded, so the
	// profile can still be validated and every problem reported at once.
	hard bool
}

// Parse decodes a profile from data strictly: unknown fields, wrong types and duplicate keys are
// problems, each with file (as given), line, column and field path. It does not apply defaults,
// resolve paths or validate; Load does all of that.
func Parse(data []byte, file string) (*Site, error) {
	d := &decoder{file: file, pos: map[string]Position{}}
	s := &Site{src: file, pos: d.pos}
	root, second, err := parseYAML(data)
	if second > 0 {
		d.add(second, 1, "", "a profile holds one YAML document; a second one starts here",
			"remove the second document, or split it into its own file")
		return s, d.probs.Err()
	}
	if err != nil {
		d.add(yamlErrorLine(err), 0, "", "the file is not valid YAML: "+yamlErrorText(err),
			"fix the YAML syntax at that line (indentation, a missing ':' or an unclosed quote)")
		return s, d.probs.Err()
	}
	if root == nil || len(root.Content) == 0 {
		d.add(1, 1, "", "the file is empty", "start from `bootstrap init --profile NAME`")
		return s, d.probs.Err()
	}
	d.decode(root.Content[0], reflect.ValueOf(s).Elem(), "")
	d.probs = d.probs.unique()
	if len(d.probs) > 0 && !d.hard {
		return s, &softErrors{d.probs}
	}
	return s, d.probs.Err()
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

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

func yamlErrorLine(err error) int {
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		if n, e := strconv.Atoi(m[1]); e == nil {
			return n
		}
	}
	return 0
}

var yamlLinePrefixRE = regexp.MustCompile(`^line \d+: `)

func yamlErrorText(err error) string {
	return yamlLinePrefixRE.ReplaceAllString(strings.TrimPrefix(err.Error(), "yaml: "), "")
}

func (d *decoder) add(line, col int, path, msg, remedy string) {
	d.hard = true
	d.addSoft(line, col, path, msg, remedy)
}

// addSoft records a problem that leaves the decoded values usable (see decoder.hard).
func (d *decoder) addSoft(line, col int, path, msg, remedy string) {
	d.probs = append(d.probs, Problem{
		Position: Position{File: d.file, Line: line, Column: col},
		Path:     path, Severity: SeverityError, Message: msg, Remedy: remedy,
	})
}

func (d *decoder) addAt(n *yaml.Node, path, msg, remedy string) {
	d.add(n.Line, n.Column, path, msg, remedy)
}

// visit counts a node against the budget; false means stop walking.
func (d *decoder) visit(n *yaml.Node) bool {
	if d.aborted {
		return false
	}
	d.visited++
	if d.visited > maxNodes {
		d.aborted = true
		d.addAt(n, "", fmt.Sprintf("the document expands to more than %d YAML nodes (aliases included)", maxNodes),
			"write the profile without deeply nested anchors and aliases")
		return false
	}
	return true
}

var secretRefType = reflect.TypeOf(SecretRef{})

// decode fills v from n. path is the field path of v.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		if !d.visit(n) {
			return
		}
		n = n.Alias
	}
	if !d.visit(n) {
		return
	}
	if _, seen := d.pos[path]; !seen {
		d.pos[path] = Position{File: d.file, Line: n.Line, Column: n.Column}
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return // an explicit null leaves the zero value
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.decode(n, v.Elem(), path)
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.addAt(n, path, "expected a list, found "+kindName(n), "write it as a YAML list (`- item` lines or [a, b])")
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			d.decode(item, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		v.Set(s)
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			d.addAt(n, path, "expected a string, found "+kindName(n), "write a single value")
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		b, err := strconv.ParseBool(n.Value)
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || err != nil {
			d.addAt(n, path, "expected true or false, found "+kindName(n), "write true or false (unquoted)")
			return
		}
		v.SetBool(b)
	case reflect.Int:
		i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 32)
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || err != nil {
			d.addAt(n, path, "expected a whole number, found "+kindName(n), "write a number such as 23 (unquoted)")
			return
		}
		v.SetInt(i)
	case reflect.Map, reflect.Interface:
		d.decodeFree(n, v, path)
	default:
		d.addAt(n, path, fmt.Sprintf("internal: cannot decode into %s", v.Type()), "report this as a bug")
	}
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		remedy := "write `key: value` lines indented under it"
		if v.Type() == secretRefType {
			// Never echo the value: it may be the password itself.
			d.addAt(n, path, "a secret is given inline; secrets are references, never values",
				"write `{file: PATH}` (a file with mode 0600) or `{env: NAME}` (an environment variable), and remove the value from this file")
			return
		}
		d.addAt(n, path, "expected a mapping, found "+kindName(n), remedy)
		return
	}
	fields := structFields(v.Type())
	for _, p := range d.pairs(n, path, 0) {
		name := p.key.Value
		fpath := joinPath(path, name)
		idx, ok := fields[name]
		if !ok && path == "" && strings.HasPrefix(name, "x-") {
			continue // top-level "x-" fields are extensions, ignored: a place for anchors to merge from
		}
		if !ok {
			d.addSoft(p.key.Line, p.key.Column, fpath, fmt.Sprintf("unknown field %q", name), unknownFieldRemedy(name, fields))
			continue
		}
		d.decode(p.value, v.Field(idx), fpath)
	}
}

func unknownFieldRemedy(name string, fields map[string]int) string {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	best, bestDist := "", 4
	for _, k := range names {
		if dist := suggest.Distance(strings.ToLower(name), strings.ToLower(k)); dist < bestDist {
			best, bestDist = k, dist
		}
	}
	if best != "" {
		return fmt.Sprintf("did you mean %q? (valid here: %s)", best, strings.Join(names, ", "))
	}
	return "remove it; valid here: " + strings.Join(names, ", ")
}

// structFields maps yaml names to field indexes, skipping "-" and unexported fields.
func structFields(t reflect.Type) map[string]int {
	m := map[string]int{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		m[name] = i
	}
	return m
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			return "a string"
		case "!!int", "!!float":
			return "a number"
		case "!!bool":
			return "a boolean"
		case "!!null":
			return "null"
		}
		return "a scalar (" + n.ShortTag() + ")"
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}
