package stages

import (
	"slices"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
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
