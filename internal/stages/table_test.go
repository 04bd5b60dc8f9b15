package stages

import (
	"slices"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
)

// TestTableIsTheStageList: the stages the runner gets are the table's rows, in its order; each
// stage answers its row's name and summary, implements pipeline.NodeScoped exactly when its row
// says so, and needs only stages before it.
func TestTableIsTheStageList(t *testing.T) {
	table, list := Table(), All()
	if len(table) != len(list) {
		t.Fatalf("%d rows, %d stages", len(table), len(list))
	}
	seen := map[string]bool{}
	for i, row := range table {
		st := list[i]
		if st.Name() != row.Name || st.Summary() != row.Summary || row.Summary == "" || row.Does == "" {
			t.Errorf("row %d (%s): stage %s says %q", i, row.Name, st.Name(), st.Summary())
		}
		ns, ok := st.(pipeline.NodeScoped)
		if (ok && ns.NodeScoped()) != row.NodeScoped {
			t.Errorf("%s: NodeScoped %t in the table, not so in the stage", row.Name, row.NodeScoped)
		}
		for _, n := range row.Needs {
			if !seen[n] {
				t.Errorf("%s needs %s, which is not an earlier stage", row.Name, n)
			}
		}
		if seen[row.Name] {
			t.Errorf("%s twice in the table", row.Name)
		}
		seen[row.Name] = true
		if got, ok := Lookup(row.Name); !ok || got.Name != row.Name {
			t.Errorf("Lookup(%s) = %v, %t", row.Name, got.Name, ok)
		}
	}
	if !slices.Equal(Names(), []string{NamePreflight, NameMirror, NameISO, NameBoot, NameInstall, NameConfigure, NameHandoff}) {
		t.Errorf("Names() = %v", Names())
	}
	if _, ok := Lookup("nosuchstage"); ok {
		t.Error("Lookup found a stage that is not in the table")
	}
}

// TestPreflightNamesTheTableStages: preflight names the stages a check is needed by without
// importing this package (which imports it); every name it uses must be a stage of the table.
func TestPreflightNamesTheTableStages(t *testing.T) {
	for _, n := range []string{preflight.StageMirror, preflight.StageISO, preflight.StageBoot, preflight.StageInstall,
		preflight.StageConfigure, preflight.StageHandoff} {
		if _, ok := Lookup(n); !ok {
			t.Errorf("preflight names stage %q, which is not in the table", n)
		}
	}
	for _, c := range []preflight.Category{preflight.CategoryBMC, preflight.CategoryGit, preflight.CategoryDNS, preflight.CategoryNTP,
		preflight.CategoryNetwork, preflight.CategoryRegistry, preflight.CategoryJumpHost, preflight.CategoryFiles} {
		for _, name := range []string{"disk /", "iso 0.0.0.0:8080", "file nodes[0].bmc.caFile", "file gitops.caFile", "file registry.caFile", "x y"} {
			for _, n := range preflight.NeededBy(name, c) {
				if _, ok := Lookup(n); !ok {
					t.Errorf("NeededBy(%q, %s) names %q, which is not in the table", name, c, n)
				}
			}
		}
	}
}
