// expcount counts the exported package-level names (and exported methods of exported types) of
// every package of a module that no other package refers to (another package's tests count, an
// external _test package counts as another package; e2e and main packages define nothing counted).
// It is a module of its own so that bootstrap's go.mod does not need golang.org/x/tools.
//
//	cd scripts/expcount && go run . ../..          # the two counts
//	cd scripts/expcount && go run . ../.. list     # and every unused name
package main

import (
	"fmt"
	"go/types"
	"os"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

func main() {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedSyntax | packages.NeedFiles, Tests: true, Dir: os.Args[1], BuildFlags: []string{"-tags=e2e"}}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		panic(err)
	}
	used := map[string]bool{}
	defined := map[types.Object]string{}
	for _, p := range pkgs {
		for _, obj := range p.TypesInfo.Uses {
			if obj.Pkg() == nil || obj.Pkg().Path() == p.PkgPath {
				continue
			}
			used[key(origin(obj))] = true
		}
		if strings.HasSuffix(p.PkgPath, "_test") || strings.Contains(p.ID, " [") || strings.HasPrefix(p.PkgPath, "github.com/bootstrap-dev/bootstrap/e2e") || strings.HasSuffix(p.PkgPath, "/main") || p.Name == "main" {
			continue
		}
		sc := p.Types.Scope()
		for _, n := range sc.Names() {
			o := sc.Lookup(n)
			if !o.Exported() {
				continue
			}
			defined[o] = p.PkgPath
			if tn, ok := o.(*types.TypeName); ok {
				if nt, ok := tn.Type().(*types.Named); ok {
					for i := 0; i < nt.NumMethods(); i++ {
						if m := nt.Method(i); m.Exported() {
							defined[m] = p.PkgPath
						}
					}
				}
			}
		}
	}
	var unused []string
	per := map[string]int{}
	for o, pkg := range defined {
		if !used[key(o)] {
			name := o.Name()
			if f, ok := o.(*types.Func); ok {
				if r := f.Type().(*types.Signature).Recv(); r != nil {
					name = types.TypeString(r.Type(), func(*types.Package) string { return "" }) + "." + name
				}
			}
			unused = append(unused, strings.TrimPrefix(pkg, "github.com/bootstrap-dev/bootstrap/")+"."+name)
			per[strings.TrimPrefix(pkg, "github.com/bootstrap-dev/bootstrap/")]++
		}
	}
	sort.Strings(unused)
	if len(os.Args) > 2 {
		for _, u := range unused {
			fmt.Println(u)
		}
	}
	top, topUnused := 0, 0
	for o := range defined {
		if f, ok := o.(*types.Func); ok && f.Type().(*types.Signature).Recv() != nil {
			continue
		}
		top++
		if !used[key(o)] {
			topUnused++
		}
	}
	fmt.Printf("package-level exported names: %d, used by no other package: %d (with exported methods: %d, %d)\n", top, topUnused, len(defined), len(unused))
}

func origin(o types.Object) types.Object {
	if f, ok := o.(*types.Func); ok {
		return f.Origin()
	}
	if v, ok := o.(*types.Var); ok {
		return v.Origin()
	}
	return o
}

func key(o types.Object) string {
	k := o.Pkg().Path() + "." + o.Name()
	if f, ok := o.(*types.Func); ok {
		if r := f.Type().(*types.Signature).Recv(); r != nil {
			k = o.Pkg().Path() + "." + types.TypeString(r.Type(), func(*types.Package) string { return "" }) + "." + o.Name()
		}
	}
	return k
}
