//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/e2e/lab/harness"
	"github.com/bootstrap-dev/bootstrap/internal/bmc/bmctest"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/report"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// One more GPU worker in the profile, on a cluster installed and handed off: the next run re-runs
// only the stages whose inputs changed (iso: agent-config lists the hosts, so the shared agent
// ISO changes; boot: the new node; install, configure and handoff after them), leaves the mirror
// alone, sends nothing to the BMCs of the nodes already installed (each is warned that the ISO
// changed and left running) and powers only the new node, which joins the cluster.
func TestOneMoreWorker(t *testing.T) {
	l := startLab(t)
	l.until = "" // the whole pipeline, through handoff
	l.mustRun(t, 0, "run")
	power, writes := l.powerActions(), l.bmcWrites()
	pushes := l.reg.Proxy.Writes()
	before := len(l.journal(t))

	sim := newWorkerBMC(t, l, "52:54:00:00:21:01")
	l.cluster.Join("gpu-2", sim)
	l.editSite(t, func(m map[string]any) {
		nodes := m["nodes"].([]any)
		var n map[string]any
		b, _ := json.Marshal(node(m, "gpu-1"))
		_ = json.Unmarshal(b, &n)
		mac, ip := "52:54:00:00:21:01", l.IP(33).String()
		n["name"], n["bootMAC"] = "gpu-2", mac
		n["interfaces"].([]any)[0].(map[string]any)["macAddress"] = mac
		iface := n["networkConfig"].(map[string]any)["interfaces"].([]any)[0].(map[string]any)
		iface["mac-address"] = mac
		iface["ipv4"].(map[string]any)["address"].([]any)[0].(map[string]any)["ip"] = ip
		n["bmc"].(map[string]any)["address"] = sim.URL()
		m["nodes"] = append(nodes, n)
	})
	l.publishDNS(t)

	r := l.mustRun(t, 0, "run")
	j := l.journal(t)[before:]
	started := map[string]string{}
	for _, e := range entries(j, pipeline.EntryStageStarted, "") {
		started[e.Stage] = e.Reason
	}
	if _, ok := started["mirror"]; ok {
		t.Errorf("mirror ran again (%s) although its inputs did not change", started["mirror"])
	}
	for _, st := range []string{"iso", "boot", "install", "configure", "handoff"} {
		if _, ok := started[st]; !ok {
			t.Errorf("%s did not run for the new worker:\n%s", st, tail(r.out, 30))
		}
		if len(entries(j, pipeline.EntryStageSucceeded, st)) != 1 {
			t.Errorf("%s did not succeed after the new worker:\n%s", st, tail(r.out, 30))
		}
	}
	if p := l.reg.Proxy.Writes(); p != pushes {
		t.Errorf("%d pushes to the registry for a new worker", p-pushes)
	}
	after := l.bmcWrites()
	for n, p := range l.powerActions() {
		if p != power[n] {
			t.Errorf("node %s power-cycled again (%d -> %d) for a new worker", n, power[n], p)
		}
		if after[n] != writes[n] {
			t.Errorf("node %s: %d writes to its BMC for a new worker, want none", n, after[n]-writes[n])
		}
		// The shared ISO changed (agent-config lists every host): kept nodes are told, not rebooted.
		if !strings.Contains(r.out, "node "+n+" booted ISO") || !strings.Contains(r.out, "replay boot --node "+n) {
			t.Errorf("node %s: no warning that the ISO changed under it:\n%s", n, tail(r.out, 40))
		}
	}
	if strings.Contains(r.out, "node gpu-2 booted ISO") {
		t.Error("the new node gpu-2 is warned as if it had booted an older ISO")
	}
	var inst struct {
		Cluster struct{ Nodes []string } `json:"cluster"`
	}
	if es := entries(j, pipeline.EntryStageSucceeded, "install"); len(es) == 0 || json.Unmarshal(es[0].Data, &inst) != nil ||
		!slices.Contains(inst.Cluster.Nodes, "gpu-2") {
		t.Errorf("install did not see gpu-2 join: nodes %v", inst.Cluster.Nodes)
	}
	if s := sim.Stats(); s.PowerActions != 1 || s.RangeRequests == 0 {
		t.Errorf("gpu-2: %d power actions, %d range requests of its ISO; want 1 and some", s.PowerActions, s.RangeRequests)
	}
	bmcInReport(t, l, power)
	t.Logf("stages started for the new worker: %v; second run %s", started, r.took)
}

// bmcInReport checks the evidence report attributes each power action to the boot attempt and
// run that did it: the first nodes' to attempt 1 in the first run (carried, with no BMC request,
// by attempt 2), the new worker's to attempt 2 in the second run.
func bmcInReport(t *testing.T, l *testLab, first map[string]int) {
	t.Helper()
	out := l.mustRun(t, 0, "report", "-o", "json").out
	var rep report.Report
	if err := json.Unmarshal(resultData(t, out), &rep); err != nil {
		t.Fatalf("report json: %v", err)
	}
	runs := rep.History.Runs
	if len(runs) != 2 {
		t.Fatalf("report: %d runs, want 2", len(runs))
	}
	got := map[string][]string{}
	for _, n := range rep.Evidence.BMC {
		for _, a := range n.Actions {
			if a.Action == "power" || a.Action == "carried" {
				run := map[int64]string{runs[0].Seq: "run 1", runs[1].Seq: "run 2"}[a.Run]
				got[n.Node] = append(got[n.Node], fmt.Sprintf("%s attempt %d %s", a.Action, a.Attempt, run))
			}
		}
	}
	for n := range first {
		if want := "[power attempt 1 run 1 carried attempt 2 run 2]"; fmt.Sprint(got[n]) != want {
			t.Errorf("report: %s power records %v, want %s", n, got[n], want)
		}
	}
	if want := "[power attempt 2 run 2]"; fmt.Sprint(got["gpu-2"]) != want {
		t.Errorf("report: gpu-2 power records %v, want %s", got["gpu-2"], want)
	}
}

// newWorkerBMC starts one more iDRAC9 simulator on 127.0.0.1 with a lab CA certificate and the
// lab's BMC password, reporting mac.
func newWorkerBMC(t *testing.T, l *testLab, mac string) *bmctest.BMC {
	t.Helper()
	cert, err := l.CA.Issue([]netip.Addr{netip.MustParseAddr("127.0.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	pass, err := os.ReadFile(filepath.Join(l.Dir, l.Site.Nodes[0].BMC.Password.File))
	if err != nil {
		t.Fatal(err)
	}
	sim := bmctest.New(bmctest.Options{Firmware: "7.00.00.00", Model: "PowerEdge XE9680", Password: string(pass),
		MACs: []string{mac}, BootDelay: l.bmcs.BootDelay, Cert: &bmctest.Cert{TLS: cert, CAPEM: l.CA.PEM()}})
	t.Cleanup(sim.Close)
	return sim
}

// publishDNS makes the lab DNS answer for every node of the edited profile.
func (l *testLab) publishDNS(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(l.SiteFile)
	if err != nil {
		t.Fatal(err)
	}
	var s site.Site
	if err := json.Unmarshal(b[bytes.IndexByte(b, '{'):], &s); err != nil {
		t.Fatal(err)
	}
	for _, c := range l.Components() {
		if d, ok := c.(*harness.DNS); ok {
			d.SetZone(harness.ZoneFor(&s))
			return
		}
	}
	t.Fatal(fmt.Errorf("the lab has no DNS"))
}
