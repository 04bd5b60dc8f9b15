package site

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"reflect"
	"strings"
)

// typesSource is the source of the profile types; Schema reads the doc comments from it so the
// schema's descriptions are the code's.
//
//go:embed types.go
var typesSource []byte

// schemaEnums are the closed value sets, keyed "Type.Field".
var schemaEnums = map[string][]string{
	"Node.Role":                  {RoleMaster, RoleWorker},
	"BMC.Vendor":                 {"dell", "generic"},
	"Cluster.Platform":           {PlatformBaremetal, PlatformNone},
	"Networking.NetworkType":     {defaultNetworkType},
	"Release.Architecture":       {"amd64", "arm64", "ppc64le", "s390x"},
	"GitOps.InstallPlanApproval": {"Automatic", "Manual"},
}

// schemaTypes replace the type a field's Go type gives, keyed "Type.Field": a value YAML may write
// as a number or a string.
var schemaTypes = map[string]map[string]any{
	// MachineConfigPool spec.maxUnavailable: a count or a percent (ParseMaxUnavailable).
	"Upgrade.MaxUnavailable": {"oneOf": []any{
		map[string]any{"type": "integer", "minimum": 1},
		map[string]any{"type": "string", "pattern": `^([1-9][0-9]*|([1-9][0-9]?|100)%)$`},
	}},
}

// Schema returns the JSON Schema (draft 2020-12) of the site profile, generated from the Go
// types: field names from the yaml tags, required from the tags without omitempty, descriptions
// from the doc comments, defaults from Defaults(). profiles/schema.json is its output; a test
// fails when that file is stale (`go test ./internal/site -run TestSchema -update` rewrites it).
func Schema() ([]byte, error) {
	docs, err := typeDocs(typesSource)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	g := &schemaGen{docs: docs, defs: map[string]any{}, defaults: map[string]any{}}
	g.collectDefaults(reflect.ValueOf(Defaults()))
	g.typeSchema(reflect.TypeOf(Site{}))
	site := g.defs["Site"].(map[string]any)
	site["patternProperties"] = map[string]any{"^x-": map[string]any{"description": "Extension fields are ignored: a place for YAML anchors to merge from."}}
	props := site["properties"].(map[string]any)
	props["apiVersion"].(map[string]any)["const"] = APIVersion
	props["kind"].(map[string]any)["const"] = Kind
	out := map[string]any{
		"$schema":     "https://json-schema.org/draft/2020-12/schema",
		"$id":         "urn:bootstrap:site:" + APIVersion,
		"title":       "bootstrap site profile (" + APIVersion + ", kind " + Kind + ")",
		"description": "Generated from internal/site/types.go; do not edit.",
		"$ref":        "#/$defs/Site",
		"$defs":       g.defs,
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return append(b, '\n'), nil
}

type schemaGen struct {
	docs     map[string]string // "Type" and "Type.Field" → doc text
	defs     map[string]any
	defaults map[string]any // "Type.Field" → default value
}

// collectDefaults records every non-zero field of Defaults() by "Type.Field".
func (g *schemaGen) collectDefaults(v reflect.Value) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return
	}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f, fv := t.Field(i), v.Field(i)
		if !f.IsExported() || fv.IsZero() {
			continue
		}
		inner := fv
		if inner.Kind() == reflect.Pointer {
			inner = inner.Elem()
		}
		if inner.Kind() == reflect.Struct {
			g.collectDefaults(inner)
			continue
		}
		g.defaults[t.Name()+"."+f.Name] = toJSONValue(inner)
	}
}

// toJSONValue converts a default to what encoding/json writes for it, via its yaml names.
func toJSONValue(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Slice:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = toJSONValue(v.Index(i))
		}
		return out
	case reflect.Struct:
		m := map[string]any{}
		for name, idx := range structFields(v.Type()) {
			m[name] = toJSONValue(v.Field(idx))
		}
		return m
	}
	return v.Interface()
}

func (g *schemaGen) typeSchema(t reflect.Type) map[string]any {
	switch t.Kind() {
	case reflect.Pointer:
		return g.typeSchema(t.Elem())
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int:
		return map[string]any{"type": "integer"}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": g.typeSchema(t.Elem())}
	case reflect.Map, reflect.Interface:
		return map[string]any{"type": "object"}
	case reflect.Struct:
		if _, done := g.defs[t.Name()]; !done {
			g.defs[t.Name()] = nil // reserve, for recursive types
			g.defs[t.Name()] = g.structSchema(t)
		}
		return map[string]any{"$ref": "#/$defs/" + t.Name()}
	}
	panic("schema: unsupported kind " + t.Kind().String()) // a programming error caught by the schema test
}

func (g *schemaGen) structSchema(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		key := t.Name() + "." + f.Name
		p := g.typeSchema(f.Type)
		if o, ok := schemaTypes[key]; ok {
			p = maps.Clone(o)
		}
		desc := g.docs[key]
		switch f.Tag.Get("site") {
		case "file":
			desc = joinSentences(desc, "A local file; relative paths are resolved against the profile's directory.")
		case "dir":
			desc = joinSentences(desc, "A local directory; relative paths are resolved against the profile's directory.")
		case "exec":
			desc = joinSentences(desc, "A program: a name looked up on PATH, or a path.")
		case "secret":
			desc = joinSentences(desc, "A local secret file, mode 0600; relative paths are resolved against the profile's directory.")
		}
		if _, isRef := p["$ref"]; isRef && desc != "" {
			p = map[string]any{"allOf": []any{p}} // keep the field's own description beside the $ref
		}
		if desc != "" {
			p["description"] = desc
		}
		if e, ok := schemaEnums[key]; ok {
			p["enum"] = e
		}
		if d, ok := g.defaults[key]; ok {
			p["default"] = d
		}
		props[name] = p
		if !strings.Contains(opts, "omitempty") {
			required = append(required, name)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if d := g.docs[t.Name()]; d != "" {
		s["description"] = d
	}
	if len(required) > 0 {
		s["required"] = required
	}
	if t == secretRefType {
		s["oneOf"] = []any{map[string]any{"required": []string{"file"}}, map[string]any{"required": []string{"env"}}}
	}
	return s
}

func joinSentences(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

// typeDocs reads the doc comments of the struct types and their fields from Go source.
func typeDocs(src []byte) (map[string]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "types.go", src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	docs := map[string]string{}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, spec := range gd.Specs {
			ts := spec.(*ast.TypeSpec)
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			doc := ts.Doc
			if doc == nil && len(gd.Specs) == 1 {
				doc = gd.Doc
			}
			docs[ts.Name.Name] = cleanDoc(doc.Text())
			for _, field := range st.Fields.List {
				text := cleanDoc(joinSentences(field.Doc.Text(), field.Comment.Text()))
				for _, n := range field.Names {
					docs[ts.Name.Name+"."+n.Name] = text
				}
			}
		}
	}
	return docs, nil
}

func cleanDoc(s string) string { return strings.Join(strings.Fields(s), " ") }
