package agentiso

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

var update = flag.Bool("update", false, "rewrite golden files")

var profiles = []string{"lab", "dell-xe7740-h200", "compact-3node", "sno"}

// loadProfile decodes a test profile strictly (unknown fields fail) and records its path so
// relative paths resolve against testdata/profiles.
func loadProfile(t testing.TB, name string) *site.Site {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "profiles", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var s site.Site
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	s.File = p
	return &s
}

func renderProfile(t testing.TB, name string) *Rendered {
	t.Helper()
	s := loadProfile(t, name)
	var mirror *MirrorOutputs
	if name != "sno" { // sno renders without mirror outputs: the mirror stage has not run
		var err error
		if mirror, err = LoadMirrorOutputs(filepath.Join("testdata", "mirror")); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Render(RenderOptions{Site: s, Mirror: mirror})
	if err != nil {
		t.Fatalf("render %s: %v", name, err)
	}
	return r
}

func TestRenderGolden(t *testing.T) {
	for _, name := range profiles {
		t.Run(name, func(t *testing.T) {
			r := renderProfile(t, name)
			dir := filepath.Join("testdata", "golden", name)
			if *update {
				os.RemoveAll(dir)
				if _, err := r.Write(dir); err != nil {
					t.Fatal(err)
				}
			}
			var want []string
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, _ := filepath.Rel(dir, p)
					want = append(want, filepath.ToSlash(rel))
				}
				return nil
			})
			var got []string
			for _, f := range r.Files {
				got = append(got, f.Path)
				golden, err := os.ReadFile(filepath.Join(dir, f.Path))
				if err != nil {
					t.Errorf("%s: no golden file (run go test -update): %v", f.Path, err)
					continue
				}
				if !bytes.Equal(golden, f.Data) {
					t.Errorf("%s differs from golden file; got:\n%s", f.Path, f.Data)
				}
			}
			sort.Strings(want)
			sort.Strings(got)
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("files = %v, golden has %v", got, want)
			}
		})
	}
}

func TestRenderDeterministic(t *testing.T) {
	a := renderProfile(t, "dell-xe7740-h200")
	for i := 0; i < 5; i++ {
		b := renderProfile(t, "dell-xe7740-h200")
		if len(a.Files) != len(b.Files) {
			t.Fatalf("file count changed")
		}
		for j := range a.Files {
			if !bytes.Equal(a.Files[j].Data, b.Files[j].Data) {
				t.Fatalf("%s differs between two renders", a.Files[j].Path)
			}
		}
	}
}

func TestRenderContent(t *testing.T) {
	r := renderProfile(t, "dell-xe7740-h200")
	files := map[string]string{}
	for _, f := range r.Files {
		files[f.Path] = string(f.Data)
	}
	var ic InstallConfig
	if err := yaml.Unmarshal([]byte(files[InstallConfigFile]), &ic); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ic.PullSecret, "quay.io") || strings.Contains(ic.PullSecret, "registry.redhat.io") {
		t.Errorf("pull secret leaks other registries' credentials: %s", ic.PullSecret)
	}
	if !strings.Contains(ic.PullSecret, "registry.lab.example:8443") {
		t.Errorf("pull secret lacks the mirror entry: %s", ic.PullSecret)
	}
	if n := strings.Count(ic.AdditionalTrustBundle, "BEGIN CERTIFICATE"); n != 2 {
		t.Errorf("trust bundle has %d certificates, want 2 (registry CA once, corporate CA)", n)
	}
	if len(ic.ImageDigestSources) != 3 || ic.ControlPlane.Replicas != 3 || ic.Compute[0].Replicas != 2 || ic.Platform.Baremetal == nil {
		t.Errorf("install-config = %+v", ic)
	}
	mc := files["openshift/99-worker-module-blacklist.yaml"]
	for _, want := range []string{"module_blacklist=irdma,nouveau", "/etc/modprobe.d/", "blacklist%20irdma", "install%20nouveau%20%2Fbin%2Ffalse", "role: worker"} {
		if !strings.Contains(mc, want) {
			t.Errorf("worker MachineConfig lacks %q:\n%s", want, mc)
		}
	}
	if _, ok := files["openshift/99-master-module-blacklist.yaml"]; ok {
		t.Error("masters carry no GPU here but got a blacklist")
	}
	if !strings.Contains(files["openshift/99-operatorhub-disable-default-sources.yaml"], "disableAllDefaultSources: true") {
		t.Error("OperatorHub manifest missing")
	}
	if !strings.Contains(files["openshift/cs-redhat-operator-index-v4-16.yaml"], "kind: CatalogSource") {
		t.Error("CatalogSource not copied")
	}
	for _, f := range r.Files {
		if f.Secret != (f.Path == InstallConfigFile) {
			t.Errorf("%s: secret = %v", f.Path, f.Secret)
		}
	}
}

func TestDefaultBlacklistCompact(t *testing.T) {
	r := renderProfile(t, "compact-3node")
	var names []string
	for _, f := range r.Files {
		names = append(names, f.Path)
	}
	got := strings.Join(names, " ")
	if !strings.Contains(got, "openshift/99-master-module-blacklist.yaml") || strings.Contains(got, "worker-module-blacklist") {
		t.Errorf("compact cluster with GPU masters: files %v, want the master pool blacklist only", names)
	}
}

func TestRenderErrors(t *testing.T) {
	cases := map[string]struct {
		edit func(s *site.Site)
		want string
	}{
		"auth entry without auth": {func(s *site.Site) {
			s.Registry.AuthFile = writeTemp(t, `{"auths":{"registry.lab.example:8443":{"email":"x"}}}`)
		}, `has no "auth"`},
		"auth file lacks registry": {func(s *site.Site) { s.Registry.Host = "other:5000" }, `no entry for the mirror registry "other:5000"`},
		"missing CA":               {func(s *site.Site) { s.Registry.CAFile = "files/nope.pem" }, "registry.caFile"},
		"CA not PEM":               {func(s *site.Site) { s.Day1.TrustBundles = []string{"files/auth.json"} }, "day1.trustBundles[0]: files/auth.json holds no PEM certificate"},
		"bad extra manifest":       {func(s *site.Site) { s.Day1.ExtraManifestsDir = "files" }, "day1.extraManifestsDir"},
		"extra manifest collision": {func(s *site.Site) { s.Day1.ExtraManifestsDir = "../mirror" }, "two manifests named cs-"},
	}
	mirror, err := LoadMirrorOutputs(filepath.Join("testdata", "mirror"))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			s := loadProfile(t, "lab")
			c.edit(s)
			_, err := Render(RenderOptions{Site: s, Mirror: mirror})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func writeTemp(t *testing.T, content string) string {
	p := filepath.Join(t.TempDir(), "auth.json")
	os.WriteFile(p, []byte(content), 0o600)
	return p
}

func TestAnonymousPullSecret(t *testing.T) {
	s := loadProfile(t, "sno")
	s.Registry.AuthFile = ""
	r, err := Render(RenderOptions{Site: s})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(r.Files[0].Data, []byte(`pullSecret: '{"auths":{"registry.lab.example:8443":{"auth":"YW5vbnltb3VzOmFub255bW91cw=="}}}'`)) {
		t.Errorf("install-config:\n%s", r.Files[0].Data)
	}
	var warned bool
	for _, p := range Validate(s) {
		warned = warned || (p.Path == "registry.authFile" && p.Status == finding.Warn)
	}
	if !warned {
		t.Error("no warning for the anonymous pull secret")
	}
}

func TestWriteIdempotent(t *testing.T) {
	r := renderProfile(t, "lab")
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ManifestsDir), 0o755)
	os.WriteFile(filepath.Join(dir, ManifestsDir, "stale.yaml"), []byte("x"), 0o644)
	changed, err := r.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(changed) != len(r.Files)+1 {
		t.Errorf("first write changed %v", changed)
	}
	if st, _ := os.Stat(filepath.Join(dir, InstallConfigFile)); st.Mode().Perm() != 0o600 {
		t.Errorf("install-config mode %v, want 0600", st.Mode().Perm())
	}
	changed, err = r.Write(dir)
	if err != nil || len(changed) != 0 {
		t.Errorf("second write changed %v (err %v), want nothing", changed, err)
	}
}

func TestLoadMirrorOutputsErrors(t *testing.T) {
	dir := t.TempDir()
	if out, err := LoadMirrorOutputs(dir); err != nil || len(out.DigestSources) != 0 {
		t.Fatalf("empty dir: %v %v", out, err)
	}
	os.WriteFile(filepath.Join(dir, "idms-oc-mirror.yaml"), []byte("kind: ImageTagMirrorSet\n"), 0o644)
	_, err := LoadMirrorOutputs(dir)
	if err == nil || !strings.Contains(err.Error(), "idms-oc-mirror.yaml: document 1: kind \"ImageTagMirrorSet\"") {
		t.Fatalf("err = %v", err)
	}
}

// install-config's platform is cluster.platform: none for single-node, baremetal otherwise when
// the profile leaves it empty; an explicit value is followed; an unknown one is an error.
func TestRenderPlatform(t *testing.T) {
	cases := []struct {
		profile, platform, want string
	}{
		{"sno", "", "platform:\n  none: {}"},
		{"compact-3node", "", "platform:\n  baremetal:\n    apiVIPs:"},
		{"compact-3node", "none", "platform:\n  none: {}"},
		{"compact-3node", "baremetal", "platform:\n  baremetal:\n    apiVIPs:"},
		{"compact-3node", "vsphere", `cluster.platform: "vsphere" is not supported: use baremetal, or none`},
	}
	for _, c := range cases {
		t.Run(c.profile+"/"+c.platform, func(t *testing.T) {
			s := loadProfile(t, c.profile)
			s.Cluster.Platform = c.platform
			r, err := Render(RenderOptions{Site: s})
			if err != nil {
				if !strings.Contains(err.Error(), c.want) {
					t.Fatalf("err = %v, want %q", err, c.want)
				}
				return
			}
			ic := string(r.Files[0].Data)
			if r.Files[0].Path != "install-config.yaml" || !strings.Contains(ic, c.want) {
				t.Errorf("install-config lacks %q:\n%s", c.want, ic)
			}
			if c.want == "platform:\n  none: {}" && strings.Contains(ic, "baremetal") {
				t.Errorf("platform none with baremetal settings:\n%s", ic)
			}
		})
	}
}
