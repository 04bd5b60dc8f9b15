package mirror

import (
	"errors"
	"path/filepath"
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
			if !errors.As(err, &re) || re.Op != tt.op || re.Remedy == "" {
				t.Fatalf("want RegistryError op %s with a remedy, got %v", tt.op, err)
			}
			if tt.op == "tls" && len(re.Chain) == 0 {
				t.Errorf("tls failure without the presented chain: %v", err)
			}
		})
	}
}
