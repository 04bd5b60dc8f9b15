package site

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

// TestURLCredentialsRefused: user:password@ in bmc.address, iso.baseURL or mirror.signatureStore
// is refused with the field named, and no message holds the password.
func TestURLCredentialsRefused(t *testing.T) {
	root := copyTestdata(t)
	file := filepath.Join(root, "valid", "site.yaml")
	orig, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	const pass = "Hunter2-in-URL"
	for field, edit := range map[string]func(string) string{
		"nodes[0].bmc.address": func(s string) string {
			return strings.Replace(s, `address: "https://10.0.1.11"`, `address: "https://root:`+pass+`@10.0.1.11"`, 1)
		},
		"iso.baseURL": func(s string) string {
			return strings.Replace(s, "iso:\n", "iso:\n  baseURL: http://u:"+pass+"@10.0.0.2:8080\n", 1)
		},
		"mirror.signatureStore": func(s string) string {
			return strings.Replace(s, "mirror:\n", "mirror:\n  signatureStore: https://u:"+pass+"@sig.example.com/x\n", 1)
		},
		"mirror.signatureStore (unparseable)": func(s string) string {
			return strings.Replace(s, "mirror:\n", "mirror:\n  signatureStore: \"https://u:"+pass+"@sig.example.com:bad/%zz\"\n", 1)
		},
	} {
		edited := edit(string(orig))
		if edited == string(orig) {
			t.Fatalf("%s: edit did not apply", field)
		}
		if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		out, ps := validateText(t, root, file)
		want, _, _ := strings.Cut(field, " ")
		found := false
		for _, p := range ps {
			if p.Path == want && p.Status == finding.Fail && strings.Contains(p.Message, "credentials") {
				found = true
			}
		}
		if !found || strings.Contains(out, pass) {
			t.Errorf("%s: refused %v, password printed %v\n%s", field, found, strings.Contains(out, pass), out)
		}
	}
}
