package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/stages"
)

var updateREADME = flag.Bool("update-readme", false, "rewrite the README's stage table from stages.Table")

// TestREADMEStageTable keeps the README's stage table equal to the one stages.MarkdownTable
// renders from stages.Table; -update-readme rewrites it in place.
func TestREADMEStageTable(t *testing.T) {
	readme := readREADME(t)
	want := stages.MarkdownTable()
	start := strings.Index(readme, "| stage | does |")
	if start < 0 {
		t.Fatal("README has no stage table (a line starting with \"| stage | does |\")")
	}
	end := start + strings.Index(readme[start:], "\n\n") + 1
	if end <= start {
		end = len(readme)
	}
	got := readme[start:end]
	if got == want {
		return
	}
	if *updateREADME {
		if err := os.WriteFile(filepath.Join("..", "..", "README.md"), []byte(readme[:start]+want+readme[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README's stage table differs from stages.Table; run go test ./cmd/bootstrap -run TestREADMEStageTable -update-readme\ngot:\n%s\nwant:\n%s", got, want)
}

// TestStageHelpFromTable: run --help and the --from flag list every stage of the table, in
// order, with its summary.
func TestStageHelpFromTable(t *testing.T) {
	code, out, errs := run(t, "run", "--help")
	if code != exitOK {
		t.Fatalf("run --help: exit %d\n%s", code, errs)
	}
	last := -1
	for _, i := range stages.Table() {
		at := strings.Index(out, "  "+i.Name+" ")
		if at < 0 || !strings.Contains(out, i.Summary) {
			t.Errorf("run --help lacks stage %s (%s)", i.Name, i.Summary)
			continue
		}
		if at < last {
			t.Errorf("run --help lists %s out of the table's order", i.Name)
		}
		last = at
	}
	if !strings.Contains(out, strings.Join(stages.Names(), ", ")) {
		t.Errorf("--from's help does not list the stages in order:\n%s", out)
	}
}
