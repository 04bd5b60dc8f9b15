package stages

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso"
	"github.com/bootstrap-dev/bootstrap/internal/gather/sshtest"
	"github.com/bootstrap-dev/bootstrap/internal/install/installtest"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// failingInstaller stands in for openshift-install: bootstrap completes, the install does not.
const failingInstaller = `#!/bin/sh
echo "level=info msg=\"Waiting for $3\""
sleep 0.3
[ "$3" = install-complete ] && { echo "level=fatal msg=\"last seen was: installing\""; exit 1; }
exit 0
`

func TestInstallFailureNamesTheFailingValidationAndGathersLogs(t *testing.T) {
	sshd := sshtest.Start(t)
	api := installtest.New("")
	defer api.Close()
	api.SetHost("master-0", "master", "installing-pending-user-action", "Host is pending user action")
	api.SetValidation("master-0", "network", "ntp-synced", "failure", "Host couldn't synchronize with any NTP server")
	u, _ := url.Parse(api.URL)
	apiPort, _ := strconv.Atoi(u.Port())

	dir := t.TempDir()
	work := filepath.Join(dir, ".bootstrap")
	if err := os.MkdirAll(filepath.Join(work, agentiso.InstallerDir), 0o700); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "openshift-install")
	write := func(p, data string, mode os.FileMode) {
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(bin, failingInstaller, 0o755)
	write(sshd.KeyFile+".pub", string(ssh.MarshalAuthorizedKey(sshd.Signer.PublicKey())), 0o644)
	write(filepath.Join(work, pipeline.JournalFile), `{"kind":"stage-started","stage":"install"}`+"\n", 0o600)
	s := &site.Site{
		Cluster: site.Cluster{Name: "lab", BaseDomain: "example.com", RendezvousIP: "127.0.0.1", SSHKeyFile: sshd.KeyFile + ".pub",
			Installer: site.Installer{Path: bin, BootstrapTimeout: "1m", InstallTimeout: "1m"}},
		Nodes: []site.Node{{Name: "master-0", Role: site.RoleMaster,
			BMC:           site.BMC{Address: "https://127.0.0.1:1", Username: "root", Password: site.SecretRef{Env: "BOOTSTRAP_TEST_UNSET_BMC_PASSWORD"}},
			NetworkConfig: map[string]any{"interfaces": []any{map[string]any{"name": "eno1", "ipv4": map[string]any{"enabled": true, "address": []any{map[string]any{"ip": "127.0.0.1", "prefix-length": 8}}}}}}}},
	}
	var mu sync.Mutex
	var events []pipeline.Event
	env := &pipeline.Env{Site: s, WorkDir: work, Events: func(e pipeline.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }}
	served := 0 // a run resumed in install serves the ISO: the nodes read their live ISO until they write their disks
	_, err := Install{APIPort: apiPort, SSHPort: sshd.Port, SSHUser: sshd.User,
		Serve: func(context.Context, *pipeline.Env) error { served++; return nil }}.Run(context.Background(), env)
	if err == nil {
		t.Fatal("install should fail")
	}
	if served != 1 {
		t.Errorf("install made sure the ISO is served %d times, want 1", served)
	}
	msg := err.Error()
	for _, want := range []string{"install-complete exited 1", "host master-0: validation ntp-synced failure: Host couldn't synchronize with any NTP server", "logs gathered into " + work} {
		if !strings.Contains(msg, want) {
			t.Errorf("error misses %q:\n%s", want, msg)
		}
	}
	warned := false
	for _, e := range events {
		warned = warned || (e.Kind == pipeline.Warning && e.Node == "master-0" && strings.Contains(e.Message, "ntp-synced"))
	}
	if !warned {
		t.Error("the failing validation should be a warning event for its host the moment it appears")
	}
	tarballs, _ := filepath.Glob(filepath.Join(work, "gather-*.tar.gz"))
	if len(tarballs) != 1 {
		t.Fatalf("tarballs: %v", tarballs)
	}
	idx := readIndex(t, tarballs[0])
	byName := map[string]string{}
	for _, e := range idx.Entries {
		byName[e.Name] = e.Error
	}
	if e, ok := byName["nodes/master-0/kubelet.log"]; !ok || strings.Contains(e, "ssh") {
		t.Errorf("kubelet journal over SSH: %q (present %v)", e, ok)
	}
	if e := byName["bmc/master-0/sel.json"]; !strings.Contains(e, "BOOTSTRAP_TEST_UNSET_BMC_PASSWORD") {
		t.Errorf("an unreadable BMC password is a listed failure: %q", e)
	}
	if e, ok := byName["bootstrap/journal.jsonl"]; !ok || e != "" {
		t.Errorf("journal: %q %v", e, ok)
	}
	if kh, err := os.ReadFile(KnownHosts(work)); err != nil || !strings.Contains(string(kh), strconv.Itoa(sshd.Port)) {
		t.Errorf("host key recorded in the work dir: %v", err)
	}
}

type index struct {
	Entries []struct{ Name, Error string }
}

func readIndex(t *testing.T, path string) index {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	h, err := tr.Next()
	if err != nil || h.Name != "index.json" {
		t.Fatalf("first entry %v %v", h, err)
	}
	var idx index
	if err := json.NewDecoder(tr).Decode(&idx); err != nil {
		t.Fatal(err)
	}
	return idx
}

func TestHandoffOptionsReadSecretsOnlyAtUse(t *testing.T) {
	work := t.TempDir()
	for _, cs := range []string{"cs-certified-operators", "cs-redhat-operators"} {
		data := "apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata: {name: " + cs + ", namespace: openshift-marketplace}\nspec: {sourceType: grpc, image: r/x:v1}\n"
		if err := os.WriteFile(filepath.Join(work, cs+".yaml"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("BOOTSTRAP_TEST_GIT_TOKEN", "tok-very-secret")
	s := &site.Site{Cluster: site.Cluster{Name: "lab", BaseDomain: "example.com"}, GitOps: site.GitOps{
		Channel: "latest", InstallPlanApproval: "Manual", RepoURL: "https://git.site.example/platform/config.git", Timeout: "5m",
		Credentials: site.GitCredentials{Username: "bootstrap", Password: site.SecretRef{Env: "BOOTSTRAP_TEST_GIT_TOKEN"}},
	}}
	env := &pipeline.Env{Site: s, WorkDir: work}
	in, err := Handoff{}.Inputs(env)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(in)
	if strings.Contains(string(js), "tok-very-secret") || !strings.Contains(string(js), "BOOTSTRAP_TEST_GIT_TOKEN") {
		t.Fatalf("inputs must hold the reference, not the value: %s", js)
	}
	o, err := handoffOptions(env)
	if err != nil {
		t.Fatal(err)
	}
	if o.Source != "cs-redhat-operators" || o.Repo.Password != "tok-very-secret" || o.AppsDomain != "apps.lab.example.com" || o.Timeout.Minutes() != 5 {
		t.Fatalf("options: source %q domain %q timeout %s", o.Source, o.AppsDomain, o.Timeout)
	}
	s.GitOps.RootApp.Namespace = "argocd"
	if _, err := handoffOptions(env); err == nil || !strings.Contains(err.Error(), "gitops.rootApp.namespace") {
		t.Fatalf("want a rootApp.namespace error, got %v", err)
	}
}

func TestConfigureOptionsDefaults(t *testing.T) {
	s := &site.Site{Registry: site.Registry{Host: "registry.site.example:8443"},
		Nodes: []site.Node{{Name: "gpu-0", Role: site.RoleWorker, GPU: true}, {Name: "master-0", Role: site.RoleMaster}}}
	o := configureOptions(&pipeline.Env{Site: s, WorkDir: t.TempDir()})
	if !o.DisableDefaultSources {
		t.Error("default sources are off unless the profile says otherwise")
	}
	if len(o.Blacklists) != 1 || o.Blacklists[0].Modules[0] != "irdma" || o.Blacklists[0].Pools[0] != "worker" {
		t.Errorf("default blacklist: %+v", o.Blacklists)
	}
	off := false
	s.Day1.DisableDefaultSources = &off
	s.Day1.ModuleBlacklist = []site.ModuleBlacklist{}
	o = configureOptions(&pipeline.Env{Site: s, WorkDir: t.TempDir()})
	if o.DisableDefaultSources || len(o.Blacklists) != 0 {
		t.Errorf("explicit settings: %+v", o)
	}
}

func TestPlansSayWhatWouldHappen(t *testing.T) {
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "idms-oc-mirror.yaml"), []byte("apiVersion: config.openshift.io/v1\nkind: ImageDigestMirrorSet\nmetadata: {name: r}\nspec: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &site.Site{Nodes: []site.Node{{Name: "gpu-0", Role: site.RoleWorker, GPU: true}}}
	env := &pipeline.Env{Site: s, WorkDir: work}
	lines, err := Configure{}.Plan(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{"server-side apply ImageDigestMirrorSet/r (idms-oc-mirror.yaml)", "OperatorHub/cluster (generated)", "irdma blacklisted on the nodes of pools worker"} {
		if !strings.Contains(got, want) {
			t.Errorf("configure plan misses %q:\n%s", want, got)
		}
	}
	if lines, err := (Handoff{}).Plan(context.Background(), env); err != nil || !strings.Contains(strings.Join(lines, "\n"), "no catalog yet") {
		t.Errorf("handoff plan: %v %v", lines, err)
	}
	if lines, err := (Install{}).Plan(context.Background(), env); err != nil || len(lines) != 4 {
		t.Errorf("install plan: %v %v", lines, err)
	}
}
