package mirror

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

func TestPreflight(t *testing.T) {
	e := newEnv(t, nil)
	good := e.opts()
	if err := Preflight(ctx(t), good, "mirror"); err != nil {
		t.Fatalf("good registry: %v", err)
	}
	badAuth := filepath.Join(t.TempDir(), "auth.json")
	if err := mirrortest.WriteAuthFile(badAuth, e.dst.Host, "robot", "wrong"); err != nil {
		t.Fatal(err)
	}
	noCA := good
	noCA.Dest.CAFile = ""
	wrongPass := good
	wrongPass.Dest.AuthFile = badAuth
	down := good
	down.Dest.Host = "127.0.0.1:1"
	for _, tt := range []struct {
		name string
		o    Options
		op   string
	}{{"untrusted CA", noCA, "tls"}, {"wrong password", wrongPass, "auth"}, {"nothing listening", down, "reach"}} {
		t.Run(tt.name, func(t *testing.T) {
			err := Preflight(ctx(t), tt.o, "mirror")
			var re *RegistryError
			if !errors.As(err, &re) || re.Op != tt.op || re.Remedy() == "" {
				t.Fatalf("want RegistryError op %s with a remedy, got %v", tt.op, err)
			}
			if tt.op == "tls" && len(re.Chain) == 0 {
				t.Errorf("tls failure without the presented chain: %v", err)
			}
		})
	}
}

func TestCheckDestinationAndSources(t *testing.T) {
	e := newEnv(t, nil)
	refs, err := e.b.Sample(ctx(t), e.src.Host, 4)
	if err != nil {
		t.Fatal(err)
	}
	good := e.opts()
	cs := CheckDestination(ctx(t), good, "mirror", true)
	if len(cs) != 4 {
		t.Fatalf("%d steps, want reach, tls, auth, push: %+v", len(cs), cs)
	}
	for _, c := range cs {
		if c.Err != nil || c.NotChecked || c.Message == "" {
			t.Errorf("good registry, step %s: %+v", c.Step, c)
		}
	}
	noCA := good
	noCA.Dest.CAFile = ""
	cs = CheckDestination(ctx(t), noCA, "mirror", true)
	if cs[0].Err != nil || cs[1].Err == nil || !cs[2].NotChecked || !cs[3].NotChecked {
		t.Errorf("untrusted CA: want reach passed, tls failed, auth and push not checked: %+v", cs)
	}
	var re *RegistryError
	if !errors.As(cs[1].Err, &re) || len(re.Chain) == 0 || re.Remedy() == "" {
		t.Errorf("tls failure without chain or remedy: %v", cs[1].Err)
	}
	noPush := CheckDestination(ctx(t), good, "mirror", false)
	if len(noPush) != 3 {
		t.Errorf("without push: %d steps", len(noPush))
	}

	src := good
	src.Source = Endpoint{Insecure: true}
	cs = CheckSources(ctx(t), src, []string{refs[0], refs[1], e.src.Host + "/ocp/ghost:v1"})
	if len(cs) != 1 || cs[0].Err != nil || !strings.Contains(cs[0].Message, "sha256:") {
		t.Errorf("one host, its first image readable: %+v", cs)
	}
	cs = CheckSources(ctx(t), src, []string{e.src.Host + "/ocp/ghost:v1"})
	if len(cs) != 1 || cs[0].Err == nil || !strings.Contains(cs[0].Err.Error(), "has no") {
		t.Errorf("missing image: %+v", cs)
	}
	down := src
	down.SourceRegistry = "127.0.0.1:1"
	cs = CheckSources(ctx(t), down, refs[:1])
	if len(cs) != 1 || cs[0].Err == nil || cs[0].Host != "127.0.0.1:1" {
		t.Errorf("source down: %+v", cs)
	}
}
