// Package yamlstrict decodes YAML into Go structs strictly, the one way this module reads its
// documents (the site profile, the ImageSetConfiguration): unknown fields, wrong types and
// duplicate keys are problems, each with file, line, column and field path, and every problem is
// collected instead of stopping at the first. It is a leaf: it imports nothing of this module but
// internal/suggest and internal/finding (its problems are Findings).
package yamlstrict

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/suggest"
)

// Options tune Decode for one kind of document.
type Options struct {
	// Extensions ignores top-level fields named "x-..." (a place for anchors to merge from).
	Extensions bool
	// Inline, for a struct type written as a single value instead of a mapping, may give the
	// problem to report instead of "expected a mapping" (a secret reference given inline).
	Inline func(t reflect.Type) (msg, remedy string, ok bool)
}

// Result is what Decode found.
type Result struct {
	// Pos is the position of every value met, by field path ("mirror.operators[0].catalog").
	Pos map[string]finding.Position
	// Problems, sorted by position then path, without duplicates.
	Problems finding.List
	// Hard is set by any problem after which the decoded values cannot be trusted (a wrong type);
	// unknown fields and duplicate keys leave every known value decoded.
	Hard bool
}

// Decode fills out (a pointer) from n, a document node or its content.
func Decode(n *yaml.Node, file string, out any, o Options) Result {
	d := &decoder{file: file, pos: map[string]finding.Position{}, opts: o}
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return Result{Pos: d.pos}
		}
		n = n.Content[0]
	}
	d.decode(n, reflect.ValueOf(out).Elem(), "")
	d.probs.Sort()
	var probs finding.List
	for i, p := range d.probs {
		if i == 0 || !p.Equal(d.probs[i-1]) {
			probs = append(probs, p)
		}
	}
	return Result{Pos: d.pos, Problems: probs, Hard: d.hard}
}

// maxNodes bounds the YAML nodes one decode visits, aliases expanded: a "billion laughs"
// document is refused instead of eating the jump host's memory.
const maxNodes = 100_000

// maxScalar bounds every scalar (keys included) of a document: no value of a profile or an
// ImageSetConfiguration is near it, and a hostile one (a 100 MB image name) is refused as soon as
// it is met. A field may set a lower bound with a `max:"N"` struct tag (names, references).
const maxScalar = 64 << 10

// decoder walks a yaml.Node tree into the Go types strictly, recording the position of every
// value it meets and collecting every problem instead of stopping at the first.
type decoder struct {
	file    string
	opts    Options
	probs   finding.List
	pos     map[string]finding.Position
	visited int
	aborted bool
	hard    bool
	limit   int // the `max` tag of the field being decoded (0: maxScalar)
}

var lineRE = regexp.MustCompile(`line (\d+)`)

// ErrorLine is the line a yaml library error names, 0 if none.
func ErrorLine(err error) int {
	if m := lineRE.FindStringSubmatch(err.Error()); m != nil {
		if n, e := strconv.Atoi(m[1]); e == nil {
			return n
		}
	}
	return 0
}

var linePrefixRE = regexp.MustCompile(`^line \d+: `)

// ErrorText is a yaml library error without its "yaml: line N:" prefix.
func ErrorText(err error) string {
	return linePrefixRE.ReplaceAllString(strings.TrimPrefix(err.Error(), "yaml: "), "")
}

func (d *decoder) add(line, col int, path, msg, remedy string) {
	d.hard = true
	d.addSoft(line, col, path, msg, remedy)
}

// addSoft records a problem that leaves the decoded values usable (see decoder.hard).
func (d *decoder) addSoft(line, col int, path, msg, remedy string) {
	d.probs = append(d.probs, finding.Finding{Status: finding.Fail, Position: finding.Position{File: d.file, Line: line, Column: col}, Path: path, Message: msg, Remedy: remedy})
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
	if n.Kind == yaml.ScalarNode && len(n.Value) > maxScalar {
		d.hard = true
		d.addAt(n, "", fmt.Sprintf("a value of %d bytes, more than the %d bytes any value may be", len(n.Value), maxScalar),
			"shorten it (no field of this file needs a value that long)")
		n.Value = "" // not copied into the decoded values nor into messages
	}
	if d.visited > maxNodes {
		d.aborted = true
		d.addAt(n, "", fmt.Sprintf("the document expands to more than %d YAML nodes (aliases included)", maxNodes),
			"write the profile without deeply nested anchors and aliases")
		return false
	}
	return true
}

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
		d.pos[path] = finding.Position{File: d.file, Line: n.Line, Column: n.Column}
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
		if d.limit > 0 && len(n.Value) > d.limit {
			d.hard = true
			d.addAt(n, path, fmt.Sprintf("%d characters, more than the %d allowed here", len(n.Value), d.limit),
				fmt.Sprintf("shorten it to at most %d characters", d.limit))
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
		if d.opts.Inline != nil {
			if msg, remedy, ok := d.opts.Inline(v.Type()); ok {
				d.addAt(n, path, msg, remedy) // never the value: it may be a password
				return
			}
		}
		d.addAt(n, path, "expected a mapping, found "+kindName(n), "write `key: value` lines indented under it")
		return
	}
	fields := StructFields(v.Type())
	for _, p := range d.pairs(n, path, 0) {
		name := p.key.Value
		fpath := JoinPath(path, name)
		idx, ok := fields[name]
		if !ok && path == "" && d.opts.Extensions && strings.HasPrefix(name, "x-") {
			continue // top-level "x-" fields are extensions, ignored: a place for anchors to merge from
		}
		if !ok {
			d.addSoft(p.key.Line, p.key.Column, fpath, fmt.Sprintf("unknown field %q", name), unknownFieldRemedy(name, fields))
			continue
		}
		limit := d.limit
		d.limit = 0
		if m, err := strconv.Atoi(v.Type().Field(idx).Tag.Get("max")); err == nil {
			d.limit = m
		}
		d.decode(p.value, v.Field(idx), fpath)
		d.limit = limit
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

// StructFields maps yaml names to field indexes, skipping "-" and unexported fields.
func StructFields(t reflect.Type) map[string]int {
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

// JoinPath is the field path of name under parent ("mirror" and "operators": "mirror.operators").
func JoinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}
