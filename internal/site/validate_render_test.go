package site

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

// loadValid loads testdata/valid/site.yaml from a fresh copy of testdata.
func loadValid(t *testing.T) *Site {
	t.Helper()
	root := copyTestdata(t)
	t.Chdir(filepath.Join(root, "valid"))
	s, err := Load("site.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// errorsAt returns the errors reported at path.
func errorsAt(ps finding.List, path string) []string {
	var out []string
	for _, p := range ps {
		if p.Status == finding.Fail && p.Path == path {
			out = append(out, p.Message)
		}
	}
	return out
}

// TestRegistryAuthShapes: the registry auth file's shapes that `bootstrap iso` would refuse are
// validate errors at registry.authFile, and no message quotes a credential.
func TestRegistryAuthShapes(t *testing.T) {
	cases := []struct{ name, content, want string }{
		{"valid", `{"auths":{"quay.site.test:8443":{"auth":"Q0FOQVJZLXJlZ2lzdHJ5"}}}`, ""},
		{"creds store", `{"auths":{"quay.site.test:8443":{"credsStore":"pass"}}}`, ""},
		{"not JSON", `{"auths":{"quay.site.test:8443":{"auth":"CANARY-secret"`, "is not a container auth file (JSON syntax error at byte"},
		{"other host", `{"auths":{"quay.site.test":{"auth":"Q0FOQVJZLXJlZ2lzdHJ5"}}}`, `no entry for the mirror registry "quay.site.test:8443"`},
		{"no auth", `{"auths":{"quay.site.test:8443":{"identitytoken":"CANARY-token"}}}`, `requires either auth or credsStore`},
		{"null auth", `{"auths":{"quay.site.test:8443":{"auth":null}}}`, `requires either auth or credsStore`},
		{"entry not an object", `{"auths":{"quay.site.test:8443":"CANARY-token"}}`, "is not a JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := loadValid(t)
			f := filepath.Join(t.TempDir(), "auth.json")
			if err := os.WriteFile(f, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
			s.Registry.AuthFile = f
			ps := s.Validate(WithLookupEnv(testEnv))
			got := errorsAt(ps, "registry.authFile")
			if strings.Contains(ps.String(), "CANARY") {
				t.Errorf("a credential leaked: %s", ps)
			}
			switch {
			case c.want == "" && len(got) > 0:
				t.Errorf("unexpected: %v", got)
			case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
				t.Errorf("got %v, want one error containing %q", got, c.want)
			}
			if c.want != "" && ps[0].Line == 0 {
				t.Errorf("no position: %v", ps[0])
			}
		})
	}
}

// TestVIPCountAndNTPLabel: a VIP count mismatch is a validate error; a 64-character NTP label is
// refused without claiming the installer does (it accepts it).
func TestVIPCountAndNTPLabel(t *testing.T) {
	s := loadValid(t)
	s.Cluster.IngressVIPs = []string{"10.0.0.6", "fd00::6"}
	label := strings.Repeat("a", 64)
	s.Cluster.NTPSources = []string{label + ".example.com"}
	ps := s.Validate(WithLookupEnv(testEnv))
	if got := errorsAt(ps, "cluster.ingressVIPs"); len(got) != 1 || !strings.Contains(got[0], "number of API VIPs (1) does not match number of Ingress VIPs (2)") {
		t.Errorf("ingressVIPs: %v", got)
	}
	got := errorsAt(ps, "cluster.ntpSources[0]")
	if len(got) != 1 || !strings.Contains(got[0], "longer than 63 characters") || strings.Contains(got[0], "the installer rejects") {
		t.Errorf("ntpSources[0]: %v, want the label length named and no claim that the installer rejects it", got)
	}
	s.Cluster.NTPSources = []string{"ntp_1.example.com"}
	if got := errorsAt(s.Validate(WithLookupEnv(testEnv)), "cluster.ntpSources[0]"); len(got) != 1 || !strings.Contains(got[0], "the installer rejects") {
		t.Errorf("an underscore: %v, want the installer's verdict", got)
	}
}
