package stages

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso"
	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/install/installtest"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// waitingInstaller stands in for openshift-install: until the file "joined" exists beside it,
// wait-for waits (as for hosts that never register); then bootstrap completes after 2 s and the
// install fails.
const waitingInstaller = `#!/bin/sh
echo "level=info msg=\"Waiting for $3\""
if [ -f "$(dirname "$0")/joined" ]; then sleep 2; else exec sleep 60; fi
[ "$3" = install-complete ] && { echo "level=fatal msg=\"last seen was: installing\""; exit 1; }
exit 0
`

// A node the rendezvous host has not seen after the grace stops the install in seconds, not at
// the installer's timeout: the error names it with its boot caveat, the remedy the command that
// boots it again. Once the node appears (what `replay boot --node` brings about), the same stage
// is no longer stopped by the watch: the advice changes the outcome.
func TestInstallNamesNodesTheRendezvousHostHasNotSeen(t *testing.T) {
	api := installtest.New("")
	defer api.Close()
	api.SetHost("master-0", "master", "known", "Host is ready to be installed")
	u, _ := url.Parse(api.URL)
	apiPort, _ := strconv.Atoi(u.Port())

	dir := t.TempDir()
	work := filepath.Join(dir, ".bootstrap")
	if err := os.MkdirAll(filepath.Join(work, agentiso.InstallerDir), 0o700); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "openshift-install")
	if err := os.WriteFile(bin, []byte(waitingInstaller), 0o755); err != nil {
		t.Fatal(err)
	}
	s := &site.Site{
		Cluster: site.Cluster{Name: "lab", BaseDomain: "example.com", RendezvousIP: "127.0.0.1",
			Installer: site.Installer{Path: bin, BootstrapTimeout: "10m", InstallTimeout: "10m"}},
		Nodes: []site.Node{{Name: "master-0", Role: site.RoleMaster}, {Name: "worker-1", Role: site.RoleWorker}},
	}
	why := "the ISO is served elsewhere (iso.baseURL): no fetch log shows the node read it"
	boot, _ := json.Marshal(BootOutput{Nodes: []bmc.NodeResult{{Node: "master-0", Evidence: "power Off then On"}, {Node: "worker-1", Unverified: why}}})
	env := &pipeline.Env{Site: s, WorkDir: work, Outputs: map[string]json.RawMessage{NameBoot: boot}}
	st := Install{APIPort: apiPort, NoGather: true, HostsGrace: time.Second, FollowInterval: 50 * time.Millisecond}

	start := time.Now()
	_, err := st.Run(context.Background(), env)
	took := time.Since(start)
	var missing *HostsMissingError
	if !errors.As(err, &missing) {
		t.Fatalf("install error %v; want the missing nodes named", err)
	}
	if took > 15*time.Second {
		t.Errorf("the install stopped after %s; want about the 1 s grace", took)
	}
	if len(missing.Nodes) != 1 || missing.Nodes[0] != "worker-1" || missing.All {
		t.Errorf("missing %+v; want worker-1 only", missing)
	}
	if msg := err.Error(); !strings.Contains(msg, "worker-1 (booted, unverified: "+why+")") || strings.Contains(msg, "master-0") {
		t.Errorf("error: %s", msg)
	}
	rem := missing.Remedy()
	for _, want := range []string{"BMC console", "boot order", "ISO URL", "`bootstrap replay boot --node worker-1`", "`bootstrap run`"} {
		if !strings.Contains(rem, want) {
			t.Errorf("remedy lacks %q: %s", want, rem)
		}
	}

	// Following the advice: the node boots the ISO and registers.
	api.SetHost("worker-1", "worker", "known", "Host is ready to be installed")
	if err := os.WriteFile(filepath.Join(dir, "joined"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = st.Run(context.Background(), env)
	if errors.As(err, &missing) || err == nil || !strings.Contains(err.Error(), "install-complete") {
		t.Fatalf("after the node appeared the install went on to the installer's own outcome; got %v", err)
	}

	// No node at all (the rendezvous host is not up): both are named and the remedy says so.
	api.Close()
	if err := os.Remove(filepath.Join(dir, "joined")); err != nil {
		t.Fatal(err)
	}
	_, err = st.Run(context.Background(), env)
	if !errors.As(err, &missing) || !missing.All || len(missing.Nodes) != 2 || !strings.Contains(missing.Remedy(), "rendezvous node's console") ||
		!strings.Contains(missing.Remedy(), "--node master-0,worker-1") {
		t.Errorf("rendezvous host down: %v", err)
	}
}
