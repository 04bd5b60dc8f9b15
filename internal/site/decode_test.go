package site

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

func parseProblems(t *testing.T, text string) (*Site, finding.List) {
	t.Helper()
	s, err := Parse([]byte(text), "t.yaml")
	if err == nil {
		return s, nil
	}
	ps, ok := AsProblems(err)
	if !ok || !IsInvalid(err) {
		t.Fatalf("untyped error: %v", err)
	}
	return s, ps
}

func TestParseMergeKeysAndExtensions(t *testing.T) {
	s, ps := parseProblems(t, `x-bmc: &bmc
  username: root
  vendor: generic
  password: {env: PW}
nodes:
  - name: a
    bmc: {<<: *bmc, vendor: dell, address: "https://h1"}
  - name: b
    bmc:
      <<: *bmc
      address: "https://h2"
`)
	if len(ps) != 0 {
		t.Fatalf("problems: %v", ps)
	}
	a, b := s.Nodes[0].BMC, s.Nodes[1].BMC
	if a.Vendor != "dell" || a.Username != "root" || a.Password.Env != "PW" || a.Address != "https://h1" {
		t.Errorf("node a bmc = %+v (own keys must win over merged ones)", a)
	}
	if b.Vendor != "generic" || b.Address != "https://h2" {
		t.Errorf("node b bmc = %+v", b)
	}
	// A merged value points at the anchor, where it is written.
	if pos := s.At("nodes[1].bmc.username"); pos.Line != 2 || pos.Column != 13 {
		t.Errorf("position of merged username = %+v, want 2:13", pos)
	}
	if pos := s.At("nodes[1].bmc.address"); pos.Line != 11 || pos.Column != 16 {
		t.Errorf("position of address = %+v, want 11:16", pos)
	}
	// A field not written falls back to its nearest written parent (the mapping's first key).
	if pos := s.At("nodes[1].bmc.caFile"); pos.Line != 10 || pos.Column != 7 {
		t.Errorf("fallback position = %+v, want the bmc mapping at 10:7", pos)
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name, text, want string
		line, col        int
	}{
		{"empty", "# nothing\n", "the file is empty", 1, 1},
		{"two documents", "kind: Site\n---\nkind: Site\n", "one YAML document", 2, 1},
		{"not a mapping", "- a\n- b\n", "expected a mapping, found a list", 1, 1},
		{"unknown nested", "cluster:\n  release:\n    verison: \"4.18\"\n", `did you mean "version"`, 3, 5},
		{"x- only at top level", "cluster:\n  x-note: hi\n", `unknown field "x-note"`, 2, 3},
		{"inline secret", "gitops:\n  credentials:\n    password: hunter2\n", "secrets are references", 3, 15},
		{"non-bool", "registry:\n  insecure: \"true\"\n", "expected true or false", 2, 13},
		{"merge of a scalar", "x-a: &a 5\ncluster: {<<: *a}\n", "a merge key (<<) must name a mapping", 1, 6},
		{"duplicate in networkConfig", "nodes:\n  - networkConfig:\n      a: 1\n      a: 2\n", `field "a" is written twice`, 4, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ps := parseProblems(t, tt.text)
			for _, p := range ps {
				if strings.Contains(p.String(), tt.want) {
					if p.Line != tt.line || p.Column != tt.col {
						t.Errorf("at %d:%d, want %d:%d: %s", p.Line, p.Column, tt.line, tt.col, p)
					}
					if strings.Contains(p.String(), "hunter2") {
						t.Errorf("the inline secret is echoed: %s", p)
					}
					return
				}
			}
			t.Errorf("no problem containing %q in %v", tt.want, ps)
		})
	}
}

// TestParseAliasBomb: exponential alias expansion is cut off by the node budget, quickly.
func TestParseAliasBomb(t *testing.T) {
	text := `x-a: &a {k: [v, v, v, v, v, v, v, v, v, v]}
x-b: &b {a0: *a, a1: *a, a2: *a, a3: *a, a4: *a, a5: *a, a6: *a, a7: *a, a8: *a, a9: *a}
x-c: &c {b0: *b, b1: *b, b2: *b, b3: *b, b4: *b, b5: *b, b6: *b, b7: *b, b8: *b, b9: *b}
x-d: &d {c0: *c, c1: *c, c2: *c, c3: *c, c4: *c, c5: *c, c6: *c, c7: *c, c8: *c, c9: *c}
x-e: &e {d0: *d, d1: *d, d2: *d, d3: *d, d4: *d, d5: *d, d6: *d, d7: *d, d8: *d, d9: *d}
nodes:
  - networkConfig: {e0: *e, e1: *e, e2: *e, e3: *e, e4: *e, e5: *e, e6: *e, e7: *e, e8: *e, e9: *e}
  - networkConfig: {e0: *e, e1: *e, e2: *e, e3: *e, e4: *e, e5: *e, e6: *e, e7: *e, e8: *e, e9: *e}
`
	_, ps := parseProblems(t, text)
	if len(ps) == 0 || !strings.Contains(ps.String(), "more than") {
		t.Fatalf("want the budget problem, got %v", ps)
	}
}

func TestLoadResolvesPaths(t *testing.T) {
	dir := t.TempDir()
	home, _ := os.UserHomeDir()
	file := filepath.Join(dir, "site.yaml")
	text := "cluster:\n  sshKeyFile: ssh/id.pub\n  installer: {path: openshift-install}\nregistry: {caFile: /etc/ca.pem, authFile: ~/auth.json}\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if s.Cluster.SSHKeyFile != filepath.Join(dir, "ssh/id.pub") || s.Registry.CAFile != "/etc/ca.pem" ||
		s.Registry.AuthFile != filepath.Join(home, "auth.json") || s.Cluster.Installer.Path != "openshift-install" {
		t.Errorf("paths: ssh %q ca %q auth %q installer %q", s.Cluster.SSHKeyFile, s.Registry.CAFile, s.Registry.AuthFile, s.Cluster.Installer.Path)
	}
	if s.SSHPrivateKeyFile() != filepath.Join(dir, "ssh/id") {
		t.Errorf("private key = %q", s.SSHPrivateKeyFile())
	}
	if _, _, err := LoadValidated(file); !IsInvalid(err) {
		t.Errorf("LoadValidated of an incomplete profile: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "nope.yaml")); err == nil || IsInvalid(err) {
		t.Errorf("a missing file is a plain error, got %v", err)
	}
}
