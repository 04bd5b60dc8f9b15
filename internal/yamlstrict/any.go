package yamlstrict

import (
	"fmt"
	"reflect"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"go.yaml.in/yaml/v3"
)

// decodeFree decodes a pass-through document (nmstate networkConfig) into plain values
// (map[string]any, []any, string, int, float64, bool, nil), strictly like the rest: duplicate
// keys are errors, aliases count against the node budget, and every position is recorded so
// validation can point inside it.
func (d *decoder) decodeFree(n *yaml.Node, v reflect.Value, path string) {
	if v.Kind() == reflect.Map && n.Kind != yaml.MappingNode {
		d.addAt(n, path, "expected a mapping, found "+kindName(n), "write `key: value` lines indented under it")
		return
	}
	val := d.decodeAny(n, path, 0)
	if d.aborted || val == nil {
		return
	}
	rv := reflect.ValueOf(val)
	if !rv.Type().AssignableTo(v.Type()) {
		d.addAt(n, path, "expected a mapping, found "+kindName(n), "write `key: value` lines indented under it")
		return
	}
	v.Set(rv)
}

// maxDepth bounds nesting inside pass-through documents.
const maxDepth = 64

func (d *decoder) decodeAny(n *yaml.Node, path string, depth int) any {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		if !d.visit(n) {
			return nil
		}
		n = n.Alias
	}
	if !d.visit(n) {
		return nil
	}
	if _, seen := d.pos[path]; !seen {
		d.pos[path] = finding.Position{File: d.file, Line: n.Line, Column: n.Column}
	}
	if depth > maxDepth {
		d.addAt(n, path, fmt.Sprintf("nested more than %d levels deep", maxDepth), "flatten the document")
		d.aborted = true
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for _, p := range d.pairs(n, path, 0) {
			m[p.key.Value] = d.decodeAny(p.value, JoinPath(path, p.key.Value), depth+1)
		}
		return m
	case yaml.SequenceNode:
		list := make([]any, len(n.Content))
		for i, item := range n.Content {
			list[i] = d.decodeAny(item, fmt.Sprintf("%s[%d]", path, i), depth+1)
		}
		return list
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			d.addAt(n, path, "cannot decode: "+ErrorText(err), "fix the value at that line")
			return nil
		}
		return v
	}
	return nil
}

type pair struct{ key, value *yaml.Node }

// pairs returns the key/value pairs of a mapping with YAML merge keys (<<) expanded; keys written
// in the mapping itself win over merged ones. Duplicate keys are reported.
func (d *decoder) pairs(n *yaml.Node, path string, depth int) []pair {
	var own, merged []pair
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			if depth > 16 {
				d.addAt(k, path, "merge keys (<<) nested too deeply", "flatten the anchors")
				continue
			}
			merged = append(merged, d.mergeSources(val, path, depth)...)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.addAt(k, path, "a key must be a plain name, found "+kindName(k), "write `name: value`")
			continue
		}
		if seen[k.Value] {
			d.addSoft(k.Line, k.Column, JoinPath(path, k.Value), fmt.Sprintf("field %q is written twice in this mapping", k.Value),
				"keep one of them")
			continue
		}
		seen[k.Value] = true
		own = append(own, pair{k, val})
	}
	for _, p := range merged {
		if !seen[p.key.Value] {
			seen[p.key.Value] = true
			own = append(own, p)
		}
	}
	return own
}

func (d *decoder) mergeSources(val *yaml.Node, path string, depth int) []pair {
	for val.Kind == yaml.AliasNode && val.Alias != nil {
		if !d.visit(val) {
			return nil
		}
		val = val.Alias
	}
	switch val.Kind {
	case yaml.MappingNode:
		return d.pairs(val, path, depth+1)
	case yaml.SequenceNode:
		var out []pair
		for _, item := range val.Content {
			for _, p := range d.mergeSources(item, path, depth+1) {
				if !containsKey(out, p.key.Value) {
					out = append(out, p)
				}
			}
		}
		return out
	}
	d.addAt(val, path, "a merge key (<<) must name a mapping, found "+kindName(val), "merge an anchored mapping: `<<: *name`")
	return nil
}

func containsKey(ps []pair, key string) bool {
	for _, p := range ps {
		if p.key.Value == key {
			return true
		}
	}
	return false
}
