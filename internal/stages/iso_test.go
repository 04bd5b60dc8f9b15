package stages

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/config"
	"github.com/sirupsen/logrus"
	"go.yaml.in/yaml/v3"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso"
	"github.com/bootstrap-dev/bootstrap/internal/agentiso/agentisotest"
	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

func isoEnv(t *testing.T, profile string) (*pipeline.Env, *[]pipeline.Event) {
	t.Helper()
	p, _ := filepath.Abs(filepath.Join("..", "agentiso", "testdata", "profiles", profile+".yaml"))
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var s site.Site
	if err := yaml.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	s.File = p
	work := t.TempDir()
	mirror, _ := filepath.Glob(filepath.Join("..", "agentiso", "testdata", "mirror", "*.yaml"))
	for _, m := range mirror {
		b, _ := os.ReadFile(m)
		os.WriteFile(filepath.Join(work, filepath.Base(m)), b, 0o644)
	}
	var mu sync.Mutex
	events := &[]pipeline.Event{}
	env := &pipeline.Env{Site: &s, WorkDir: work, Outputs: map[string]json.RawMessage{}, Steps: newMemSteps(),
		Events: func(e pipeline.Event) { mu.Lock(); *events = append(*events, e); mu.Unlock() }}
	return env, events
}

func TestISOManifestsOnly(t *testing.T) {
	env, _ := isoEnv(t, "lab")
	out, err := ISO{ManifestsOnly: true}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	o := out.(*ISOOutput)
	if o.Build != nil || len(o.Files) != 7 {
		t.Fatalf("output %+v", o)
	}
	for p := range o.Files {
		if _, err := os.Stat(filepath.Join(env.WorkDir, p)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(env.WorkDir, "installer")); err == nil {
		t.Error("manifests-only ran the installer")
	}
}

func TestISOStageFull(t *testing.T) {
	env, events := isoEnv(t, "dell-xe7740-h200")
	bin, err := agentisotest.BuildInstallerDouble(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env.Site.Cluster.Installer.Path = bin
	env.Site.Cluster.Release.Image = "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("ab", 32)
	in1, err := ISO{}.Inputs(env)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ISO{}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	o := out.(*ISOOutput)
	if o.Build == nil || o.Build.ReleaseImage != "registry.lab.example:8443/ocp/openshift/release-images@sha256:"+strings.Repeat("ab", 32) {
		t.Fatalf("build %+v", o.Build)
	}
	if o.URL != "http://10.40.10.2:8080/iso/agent.x86_64.iso" || len(o.Nodes) != 5 {
		t.Errorf("url %s nodes %v", o.URL, o.Nodes)
	}
	xe := o.Nodes["xe7740-1"]
	if xe.URL != "http://10.40.10.2:8080/iso/nodes/xe7740-1.iso" || xe.PatchBytes == 0 || len(xe.KernelArgs) != 2 {
		t.Errorf("xe7740-1: %+v", xe)
	}
	var warned bool
	for _, e := range *events {
		if e.Kind == pipeline.Warning && strings.Contains(e.Message, "RHEL 8 by-path form") {
			warned = true
		}
	}
	if !warned || len(o.Warnings) == 0 {
		t.Error("by-path warning not reported")
	}
	// Verify holds, a second run reuses the build, the fingerprint is stable
	raw, _ := json.Marshal(o)
	env.Outputs["iso"] = raw
	if err := (ISO{}).Verify(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	st1, _ := os.Stat(o.Build.ISO)
	out2, err := ISO{}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	st2, _ := os.Stat(out2.(*ISOOutput).Build.ISO)
	if !st1.ModTime().Equal(st2.ModTime()) {
		t.Error("second run rebuilt the ISO")
	}
	in2, _ := ISO{}.Inputs(env)
	a, _ := json.Marshal(in1)
	b, _ := json.Marshal(in2)
	if string(a) != string(b) {
		t.Error("input fingerprint not stable")
	}
	if strings.Contains(string(a), "dGVzdDp0ZXN0") {
		t.Error("inputs hold the pull secret")
	}
	// tampering is detected
	os.WriteFile(filepath.Join(env.WorkDir, "agent-config.yaml"), []byte("x"), 0o644)
	if err := (ISO{}).Verify(context.Background(), env); err == nil {
		t.Error("Verify missed a changed agent-config.yaml")
	}
}

func TestISOInvalidProfile(t *testing.T) {
	env, _ := isoEnv(t, "lab")
	env.Site.Nodes[1].Interfaces[0].MACAddress = env.Site.Nodes[0].Interfaces[0].MACAddress
	_, err := ISO{ManifestsOnly: true}.Run(context.Background(), env)
	if err == nil || !strings.Contains(err.Error(), "nodes[1].interfaces[0].macAddress") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(env.WorkDir, "install-config.yaml")); err == nil {
		t.Error("files written for an invalid profile")
	}
}

func TestISOPlan(t *testing.T) {
	env, _ := isoEnv(t, "compact-3node")
	lines, err := ISO{}.Plan(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(lines, "\n")
	if !strings.Contains(text, "install-config.yaml") || !strings.Contains(text, "per-node ISO views for 3 nodes") {
		t.Errorf("plan:\n%s", text)
	}
}

// With no installer in the profile or on PATH, the stage extracts openshift-install from the
// mirrored release payload (an in-process registry with TLS and htpasswd, as Quay), records its
// SHA-256, and a second build takes it from the work dir's cache.
func TestISOStageExtractsInstaller(t *testing.T) {
	logrus.SetOutput(io.Discard)
	env, events := isoEnv(t, "dell-xe7740-h200")
	// PATH keeps xorriso & co. but no openshift-install, which would be preferred to extraction
	var path []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "openshift-install")); err != nil {
			path = append(path, d)
		}
	}
	t.Setenv("PATH", strings.Join(path, string(os.PathListSeparator)))
	if p, err := exec.LookPath("openshift-install"); err == nil {
		t.Fatalf("openshift-install still on PATH: %s", p)
	}
	bin, err := agentisotest.BuildInstallerDouble(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	double, _ := os.ReadFile(bin)
	reg, err := mirrortest.StartRegistry(mirrortest.RegistryOptions{Dir: t.TempDir(), TLS: true, User: "robot", Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	ca, _ := os.ReadFile(reg.CAFile)
	rc := regclient.New(regclient.WithConfigHost(config.Host{Name: reg.Host, TLS: config.TLSEnabled, RegCert: string(ca), User: "robot", Pass: "s3cret"}))
	version := env.Site.Cluster.Release.Version
	rel, err := mirrortest.NewBuilder(rc, 3).Release(t.Context(), mirrortest.ReleaseSpec{PushHost: reg.Host + "/ocp", NameHost: "quay.io",
		Version: version, Components: 2, LayerKiB: 8, Installer: double})
	if err != nil {
		t.Fatal(err)
	}
	relImage := reg.Host + "/ocp/openshift-release-dev/ocp-release@" + rel.Digest
	idms := "apiVersion: config.openshift.io/v1\nkind: ImageDigestMirrorSet\nmetadata:\n  name: idms-release-0\nspec:\n  imageDigestMirrors:\n" +
		"  - mirrors: [" + reg.Host + "/ocp/openshift-release-dev/ocp-v4.0-art-dev]\n    source: quay.io/openshift-release-dev/ocp-v4.0-art-dev\n" +
		"  - mirrors: [" + reg.Host + "/ocp/openshift-release-dev/ocp-release]\n    source: quay.io/openshift-release-dev/ocp-release\n"
	if err := os.WriteFile(filepath.Join(env.WorkDir, "idms-oc-mirror.yaml"), []byte(idms), 0o644); err != nil {
		t.Fatal(err)
	}
	env.Outputs["mirror"], _ = json.Marshal(map[string]string{"releaseImage": relImage})
	env.Site.Registry.Host, env.Site.Registry.CAFile, env.Site.Registry.AuthFile = reg.Host, reg.CAFile, reg.AuthFile
	env.Site.Cluster.Installer.Path = ""

	out, err := ISO{}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	b := out.(*ISOOutput).Build
	inst := b.Installer
	if inst == nil || inst.Source != agentiso.FromRelease || inst.Cached || inst.BytesRead == 0 || b.InstallerVersion != version ||
		b.InstallerPath != filepath.Join(env.WorkDir, "cache", "openshift-install", strings.ReplaceAll(strings.SplitN(inst.Image, "@", 2)[1], ":", "-"), "openshift-install") {
		t.Fatalf("build %+v installer %+v", b, inst)
	}
	var rec agentiso.InstallerInfo
	if !env.Steps.Done("installer", &rec) || rec.SHA256 != inst.SHA256 {
		t.Errorf("installer step not journaled with its SHA-256: %+v", rec)
	}
	var said bool
	for _, e := range *events {
		said = said || (e.Step == "installer" && strings.Contains(e.Message, "sha256 "+inst.SHA256) && strings.Contains(e.Message, "layer(s)"))
	}
	if !said {
		t.Error("no event reports the extraction")
	}
	// a run killed after choosing the installer but before the build resumes without journaling
	// the installer step again
	steps := newMemSteps()
	steps.done["installer"], _ = json.Marshal(inst)
	env.Steps = steps
	if _, err := (ISO{}).Run(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	if _, again := steps.done["build"]; !again || steps.records != 1 {
		t.Errorf("resumed run recorded %d steps (want only the build)", steps.records)
	}
	// a new attempt (the ISO removed) builds again with the cached installer
	os.Remove(b.ISO)
	env.Steps = newMemSteps()
	out, err = ISO{}.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if again := out.(*ISOOutput).Build.Installer; !again.Cached || again.SHA256 != inst.SHA256 {
		t.Errorf("second build: %+v", again)
	}
}
