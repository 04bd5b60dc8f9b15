package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// jsonLinesOf checks the -o json contract on stdout: every line one JSON object with a "kind",
// the last one the result. It returns the lines' kinds and the result.
func jsonLinesOf(t *testing.T, out string) (kinds []string, res Result, data json.RawMessage) {
	t.Helper()
	if out == "" || !strings.HasSuffix(out, "\n") {
		t.Fatalf("stdout is not JSON lines: %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for i, l := range lines {
		var doc struct {
			Kind string          `json:"kind"`
			Data json.RawMessage `json:"data"`
		}
		dec := json.NewDecoder(strings.NewReader(l))
		if err := dec.Decode(&doc); err != nil || dec.More() || doc.Kind == "" {
			t.Fatalf("line %d is not one JSON object with a kind (%v): %s", i+1, err, l)
		}
		kinds = append(kinds, doc.Kind)
		if i == len(lines)-1 {
			if doc.Kind != "result" {
				t.Fatalf("last line is a %q, not the result: %s", doc.Kind, l)
			}
			if err := json.Unmarshal([]byte(l), &res); err != nil {
				t.Fatal(err)
			}
			data = doc.Data
		} else if doc.Kind == "result" {
			t.Fatalf("a result before the last line: %s", l)
		}
	}
	return kinds, res, data
}

// Every command's -o json output is JSON lines on stdout ending with the result, whose exit code
// is the process's; failures too, and failures before the command ran.
func TestJSONContractEveryCommand(t *testing.T) {
	dir := t.TempDir()
	site := writeLabSite(t, dir, "canary-json")
	bad := filepath.Join(dir, "bad.yaml")
	write(t, bad, []byte("apiVersion: bootstrap.openshift.io/v1alpha1\nkind: Site\nbogus: 1\n"), 0o644)
	for _, tc := range []struct {
		args    []string
		command string
		kind    string // a line of this kind before the result ("" for none)
	}{
		{[]string{"version"}, "version", ""},
		{[]string{"validate", "-f", site}, "validate", ""},
		{[]string{"validate", "-f", bad}, "validate", "problem"},
		{[]string{"run", "-f", bad}, "run", "problem"},
		{[]string{"plan", "-f", site}, "plan", "plan"},
		{[]string{"status", "-f", site}, "status", ""},
		{[]string{"report", "-f", site}, "report", ""},
		{[]string{"init", "--profile", "lab", "-f", filepath.Join(dir, "new.yaml")}, "init", ""},
		{[]string{"replay", "boot", "--node", "gpu-9", "-f", site}, "replay", ""},
		{[]string{"status", "--bogus-flag"}, "status", ""},
	} {
		args := append([]string{tc.args[0], "-o", "json"}, tc.args[1:]...)
		var out, errb bytes.Buffer
		code := Execute(args, strings.NewReader(""), &out, &errb)
		kinds, res, _ := jsonLinesOf(t, out.String())
		if res.Command != tc.command || res.ExitCode != code || res.OK != (code == 0) {
			t.Errorf("%v: result %+v, exit %d", tc.args, res, code)
		}
		if code != 0 && res.Error == "" && tc.kind == "" {
			t.Errorf("%v: a failed result says nothing: %+v", tc.args, res)
		}
		if tc.kind != "" && (len(kinds) < 2 || kinds[0] != tc.kind) {
			t.Errorf("%v: lines %v, want %q lines before the result", tc.args, kinds, tc.kind)
		}
	}
}

// report -o md|json|html picks the format; --format is the same flag's older name.
func TestReportOutputFlag(t *testing.T) {
	dir := t.TempDir()
	site := writeLabSite(t, dir, "canary-report")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "-f", site, "-o", "html"}, "<!DOCTYPE html>"},
		{[]string{"report", "-f", site, "--format", "html"}, "<!DOCTYPE html>"},
		{[]string{"report", "-f", site, "-o", "md"}, "# "},
		{[]string{"report", "-f", site}, "# "},
	} {
		code, out, errs := run(t, tc.args...)
		if code != 0 || !strings.HasPrefix(strings.TrimSpace(out), tc.want) {
			t.Errorf("%v: exit %d, stdout does not start with %q:\n%.200s%s", tc.args, code, tc.want, out, errs)
		}
	}
	for _, args := range [][]string{{"-o", "json"}, {"--format", "json"}} {
		code, out, _ := run(t, append([]string{"report", "-f", site}, args...)...)
		_, res, data := jsonLinesOf(t, out)
		var rep struct {
			Chain struct{ Entries int } `json:"chain"`
		}
		if code != 0 || !res.OK || json.Unmarshal(data, &rep) != nil {
			t.Errorf("report %v: exit %d, result %+v, data %.100s", args, code, res, data)
		}
	}
}
