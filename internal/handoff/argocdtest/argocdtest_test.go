package argocdtest

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
)

// A port someone else binds between its pick and the process's own bind (the application-
// controller's metrics listen on every address) makes Start pick other ports for that process,
// note it in the process's log, and go on; the instance runs.
func TestStartPicksOtherPortsWhenOneIsTaken(t *testing.T) {
	if m := Missing(); m != "" {
		t.Fatal(m)
	}
	var server clustertest.Server
	t.Cleanup(server.Stop)
	cfg := server.Config(t)
	d := clustertest.Dynamic(t, cfg)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, server.Kubeconfig(t), 0o600); err != nil {
		t.Fatal(err)
	}
	// The fourth port picked is the application-controller's metrics port (redis 1, repo-server
	// 2): it is handed out while an outgoing connection's local port holds it, as an ephemeral
	// port of a busy machine does (not listening: nothing answers on it but the controller).
	peer, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	held, err := net.Dial("tcp", peer.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	taken := held.LocalAddr().(*net.TCPAddr).Port
	var mu sync.Mutex
	picks := 0
	pick := func(host string) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		picks++
		if picks == 4 {
			return taken, nil
		}
		return freePort(host)
	}
	dir := t.TempDir()
	a, err := Start(t.Context(), d, Options{Dir: dir, Kubeconfig: kubeconfig, Namespace: "openshift-gitops", freePort: pick})
	if err != nil {
		t.Fatalf("start with a taken port: %v", err)
	}
	defer a.Stop()
	log, _ := os.ReadFile(a.Logs("argocd-application-controller"))
	if !strings.Contains(string(log), "address already in use") || !strings.Contains(string(log), "argocdtest: a port was taken (attempt 1 of 3)") {
		t.Fatalf("the controller's log does not tell of the taken port %d:\n%s", taken, log)
	}
	if a.Started("argocd-application-controller") != 1 || len(a.Restarts()) != 0 {
		t.Fatalf("started %d times, restarts %q", a.Started("argocd-application-controller"), a.Restarts())
	}
	if strings.Contains(a.specs[2].Addr, ":"+strconv.Itoa(taken)) {
		t.Fatalf("the controller still listens on the taken port: %s", a.specs[2].Addr)
	}
}
