package upgrade_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// updateService serves the channel graphs of dir (cincinnati/<channel>-<arch>.json) the way the
// update service does: GET ?channel=&arch=, 404 for a channel it does not know.
func updateService(t *testing.T, dir string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ch, arch := r.URL.Query().Get("channel"), r.URL.Query().Get("arch")
		if r.URL.Path != "/api/upgrades_info/v1/graph" || strings.Contains(ch+arch, "/") {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile(filepath.Join(dir, "cincinnati", ch+"-"+arch+".json"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The graph the mirror fetches on the connected side, recorded in content.json and carried
// (verified again) to the disconnected side, is what upgrade plan reads there: the plan comes
// from the carried directory, verified against its content.json, and an altered file is refused
// on either side.
func TestPlanFromMirroredAndCarriedGraph(t *testing.T) {
	served := upgradetest.Standard(t, false)
	srv := updateService(t, served.Path)
	isc := &mirror.ImageSetConfig{Mirror: mirror.ISCMirror{Platform: mirror.ISCPlatform{Channels: []mirror.ISCChannel{
		{Name: "stable-4.17"}, {Name: "stable-4.18"}, {Name: "stable-4.16"}}}}}

	// connected side: file://DIR
	disk := t.TempDir()
	es, err := mirror.FetchGraphs(context.Background(), srv.Client(), srv.URL+"/api/upgrades_info/v1/graph", isc, disk)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 || es[0].Path != "cincinnati/stable-4.16-amd64.json" || len(es[0].SHA256) != 64 {
		t.Fatalf("entries %+v", es)
	}
	if err := mirror.WriteContent(filepath.Join(disk, "content.json"), mirror.Content{Graph: es}); err != nil {
		t.Fatal(err)
	}
	// disconnected side: --from file://DIR into the outputs directory
	c, err := mirror.ReadContent(filepath.Join(disk, "content.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	carried, err := mirror.CarryGraph(disk, out, c.Graph)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mirror.WriteOutputs(out, mirror.Content{Graph: carried}); err != nil {
		t.Fatal(err)
	}

	cg, err := upgrade.Load(out, "amd64")
	if err != nil {
		t.Fatal(err)
	}
	if !cg.Verified || len(cg.Graphs) != 3 {
		t.Fatalf("carried graph verified=%v, %d channels", cg.Verified, len(cg.Graphs))
	}
	st := state(t, upgradetest.StateOptions{Version: "4.16.20"})
	p, err := upgrade.Compute(cg, st, upgrade.Options{To: "4.17.20", AllowMissing: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := hops(p); got != "4.16.20 -> 4.16.30 -> 4.17.20" {
		t.Fatalf("path %s", got)
	}

	// a file altered after the mirror wrote it: the far side refuses to carry it...
	f := filepath.Join(disk, "cincinnati", "stable-4.17-amd64.json")
	b, _ := os.ReadFile(f)
	if err := os.WriteFile(f, b[:len(b)-2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := mirror.CarryGraph(disk, t.TempDir(), c.Graph); err == nil || !strings.Contains(err.Error(), "stable-4.17-amd64.json") || !strings.Contains(err.Error(), "carry the disk mirror again") {
		t.Fatalf("truncated carry: %v", err)
	}
	// ...and upgrade plan refuses a carried directory changed after it was carried
	g := filepath.Join(out, "cincinnati", "stable-4.16-amd64.json")
	b, _ = os.ReadFile(g)
	if err := os.WriteFile(g, append(b, ' '), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = upgrade.Load(out, "amd64")
	refusal(t, err, upgrade.ReasonHash)
}
