package mirrortest

import (
	"testing"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/config"
)

// Pair starts a plain-HTTP source registry and a TLS + htpasswd destination (the Quay stand-in;
// user "robot", password "pw"), both closed when the test ends, and a Builder with seed that
// pushes test content to the source.
func Pair(t testing.TB, seed uint64) (src, dst *Registry, b *Builder) {
	t.Helper()
	src, err := StartRegistry(RegistryOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	dst, err = StartRegistry(RegistryOptions{Dir: t.TempDir(), TLS: true, User: "robot", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dst.Close)
	rc := regclient.New(regclient.WithConfigHost(config.Host{Name: src.Host, TLS: config.TLSDisabled}))
	return src, dst, NewBuilder(rc, seed)
}
