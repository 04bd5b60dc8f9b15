package pipeline

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestDomainErrorsKeepTheRemedyContract walks every package under internal/ (the domain packages
// and their helpers) and holds each error type that carries a remedy (a field named like remedy)
// to the Remedier contract: a `Remedy() string` method the runner finds through the wrap chain. A
// remedy kept only in a field reaches the journal inside the error text, and the journal's remedy
// is the generic one.
func TestDomainErrorsKeepTheRemedyContract(t *testing.T) {
	type typeInfo struct {
		pkg, name           string
		isError, hasRemedy  bool
		remedyField, badSig string
	}
	types := map[string]*typeInfo{}
	get := func(pkg, name string) *typeInfo {
		k := pkg + "." + name
		if types[k] == nil {
			types[k] = &typeInfo{pkg: pkg, name: name}
		}
		return types[k]
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil || len(d.Recv.List) != 1 {
					continue
				}
				name := receiverName(d.Recv.List[0].Type)
				returnsString := d.Type.Params.NumFields() == 0 && d.Type.Results.NumFields() == 1 &&
					fmt.Sprint(d.Type.Results.List[0].Type) == "string"
				switch d.Name.Name {
				case "Error":
					get(pkg, name).isError = get(pkg, name).isError || returnsString
				case "Remedy":
					if returnsString {
						get(pkg, name).hasRemedy = true
					} else {
						get(pkg, name).badSig = fset.Position(d.Pos()).String()
					}
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					for _, fld := range st.Fields.List {
						for _, n := range fld.Names {
							if strings.Contains(strings.ToLower(n.Name), "remedy") {
								get(pkg, ts.Name.Name).remedyField = n.Name
							}
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var withContract []string
	for _, ti := range types {
		where := strings.TrimPrefix(ti.pkg, "../") + "." + ti.name
		switch {
		case ti.badSig != "":
			t.Errorf("%s: Remedy must be `Remedy() string` (%s), or errors.As never finds it", where, ti.badSig)
		case ti.isError && ti.remedyField != "" && !ti.hasRemedy:
			t.Errorf("%s is an error with a remedy in field %s but no `Remedy() string` method: the runner journals the generic remedy", where, ti.remedyField)
		case ti.isError && ti.hasRemedy:
			withContract = append(withContract, where)
		}
	}
	sort.Strings(withContract)
	for _, want := range []string{"bmc.Error", "mirror.RegistryError", "preflight.FailedError"} {
		if i := sort.SearchStrings(withContract, want); i == len(withContract) || withContract[i] != want {
			t.Errorf("%s does not keep the remedy contract (found: %v)", want, withContract)
		}
	}
}

// receiverName is T of a receiver T or *T (or T[P]).
func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// TestRemedyOfFindsTheWrappedRemedy: the runner finds the contract's remedy through wrapping.
func TestRemedyOfFindsTheWrappedRemedy(t *testing.T) {
	err := fmt.Errorf("boot: %w", errors.Join(errors.New("other"), remedyErr{"replay boot --node n1"}))
	if got := remedyOf(err); got != "replay boot --node n1" {
		t.Fatalf("remedyOf = %q", got)
	}
	if got := remedyOf(errors.New("plain")); got != "" {
		t.Fatalf("remedyOf(plain) = %q, want none", got)
	}
}

type remedyErr struct{ remedy string }

func (e remedyErr) Error() string  { return "failed" }
func (e remedyErr) Remedy() string { return e.remedy }
