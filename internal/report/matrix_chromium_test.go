package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
)

// headless runs Chromium on a local file with nothing that could reach a network.
func headless(t *testing.T, args ...string) []byte {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed (Debian package chromium; make deps installs it): %v", err)
	}
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + t.TempDir(),
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--hide-scrollbars", "--host-resolver-rules=MAP * ~NOTFOUND"}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
	}
	return out.Bytes()
}

// matrixReport is a report of n nodes: all installed and powered but three, one of which never
// powered and two whose media failed.
func matrixReport(n int) *Report {
	var nodes []NodeSummary
	for i := range n {
		ns := NodeSummary{Name: fmt.Sprintf("gpu-%03d", i), Role: "worker", RootDisk: "/dev/disk/by-path/pci-0000:c3:00.0-nvme-1",
			MACs:        []string{fmt.Sprintf("b8:3f:d2:00:%02x:%02x", i/256, i%256), fmt.Sprintf("b8:3f:d2:01:%02x:%02x", i/256, i%256)},
			BMCFirmware: "7.10.50.00", Media: "insert-media: ok https://10.0.0.5:8080/agent.x86_64.iso", PowerActions: 1, Actions: 6,
			LastAction: "power-on 2026-12-04 10:00:00.000Z", Install: "succeeded"}
		switch i {
		case 7:
			ns.PowerActions, ns.Actions, ns.LastAction = 0, 0, ""
		case 40, 41:
			ns.Media = "insert-media: failed: 500 Internal Server Error"
		}
		if i < 3 {
			ns.Role = "master"
		}
		nodes = append(nodes, ns)
	}
	return &Report{Site: "gpu01", Summary: Summary{Site: "gpu01", Verdict: "complete: every stage succeeded (as journaled)",
		Nodes: nodes, NodeGroups: nodeGroups(nodes)}, Upgrade: matrixUpgrade(n)}
}

// matrixUpgrade is an upgrade section with the long unbroken values it holds in the field: image
// references by digest, SHA-256 sums, a transition per node.
func matrixUpgrade(n int) *Upgrade {
	sum := strings.Repeat("9f86d081884c7d65", 4)
	at := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	image := "quay.ai.example.com:8443/ocp/openshift-release-dev/ocp-release@sha256:" + sum
	backup, _ := json.Marshal(upgrade.Backup{Node: "gpu-000", At: at, Files: []upgrade.BackupFile{
		{Name: "snapshot_2026-12-06_100000.db", Size: 734003200, SHA256: sum}, {Name: "static_kuberesources_2026-12-06_100000.tar.gz", Size: 81920, SHA256: sum}}})
	moved := map[string][]upgrade.Transition{}
	for i := range n {
		moved[fmt.Sprintf("gpu-%03d", i)] = []upgrade.Transition{{Config: "rendered-worker-0123456789abcdef0123456789abcdef", At: at.Add(time.Duration(i) * time.Minute)}}
	}
	closed, _ := json.Marshal(map[string]any{"nodes": moved, "history": upgrade.HistoryEntry{State: "Completed", Version: "4.18.5", Image: image}})
	step := func(name string, data []byte) UpgradeStep {
		return UpgradeStep{Time: at, Step: name, Detail: stepDetail(name, data), Data: data}
	}
	desired, _ := json.Marshal(map[string]any{"written": true, "desiredUpdate": upgrade.DesiredUpdate{Version: "4.18.5", Image: image}})
	return &Upgrade{Chain: Chain{Verified: true, Entries: 40, Head: sum},
		Hops: []UpgradeHop{{Hop: "hop-4.18.5", State: "succeeded", Steps: []UpgradeStep{
			step(upgrade.StepBackup, backup), step(upgrade.StepDesired, desired), step(upgrade.StepClose, closed), step(upgrade.StepAfterBackup, backup)}},
			{Hop: "hop-4.19.2", State: "stopped"}},
		Trips: []UpgradeTrip{{Time: at, Hop: "hop-4.19.2", Error: "PodDisruptionBudget workload/" + strings.Repeat("db", 60) + ": allows 0 disruptions: node gpu-001 cannot drain",
			Remedy: "scale the workload or relax the PDB, then run again"}}}
}

// TestNodeMatrixAt128NodesInChromium renders the report of 128 nodes (and an upgrade of them,
// with its digests and SHA-256 sums) in headless Chromium at 1280 px: the page does not overflow sideways (measured by the page itself, in a copy with a
// probe script: the report has none), the healthy nodes are collapsed, the unhealthy groups
// open, and the screenshot (kept under the test's temp dir) is as wide as the window.
func TestNodeMatrixAt128NodesInChromium(t *testing.T) {
	var b bytes.Buffer
	if err := matrixReport(128).HTML(&b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if n := strings.Count(html, "<details class=\"nodes\""); n != 4 {
		t.Errorf("%d node groups, want 4 (masters, workers, the never powered, the failed media)", n)
	}
	if n := strings.Count(html, "<details class=\"nodes\" open>"); n != 2 {
		t.Errorf("%d groups open, want the 2 unhealthy ones", n)
	}
	if n := strings.Count(html, `<td class="mono">rendered-worker-`); !strings.Contains(html, `<h2 id="upgrade">`) || n != 128 {
		t.Errorf("the upgrade section with a transition per node: %d transitions, want 128", n)
	}
	dir := t.TempDir()
	// measure renders page in Chromium at 1280 px and returns what a probe script (added to a
	// copy: the report itself has no script) measured: content width, window width, height.
	measure := func(name, page string) (scroll, client, height int) {
		probe := `<script>var d=document.documentElement;document.body.setAttribute("data-probe",` +
			`"scroll="+d.scrollWidth+" client="+d.clientWidth+" height="+d.scrollHeight)</script></body>`
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(strings.Replace(page, "</body>", probe, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		dom := string(headless(t, "--window-size=1280,2000", "--dump-dom", "file://"+file))
		m := regexp.MustCompile(`data-probe="scroll=(\d+) client=(\d+) height=(\d+)"`).FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("no probe in the rendered DOM:\n%.2000s", dom)
		}
		fmt.Sscan(m[1]+" "+m[2]+" "+m[3], &scroll, &client, &height)
		return scroll, client, height
	}
	opened := strings.ReplaceAll(html, `<details class="nodes">`, `<details class="nodes" open>`)
	for name, page := range map[string]string{"collapsed": html, "every group open": opened} {
		if scroll, client, _ := measure(name+".html", page); scroll > client {
			t.Errorf("%s: the page overflows sideways at 1280 px: %d px wide content in %d", name, scroll, client)
		}
	}
	// the 124 healthy rows, collapsed, take no room: each row is some 15 px or more
	_, _, hc := measure("c.html", html)
	_, _, ho := measure("o.html", opened)
	if ho-hc < 124*15 {
		t.Errorf("the page is %d px tall collapsed, %d px with every group open: the healthy nodes are not collapsed", hc, ho)
	}
	file := filepath.Join(dir, "c.html")
	shot := filepath.Join(dir, "matrix.png")
	headless(t, "--window-size=1280,1200", "--screenshot="+shot, "file://"+file)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if w := img.Bounds().Dx(); w != 1280 {
		t.Errorf("screenshot %d px wide, want 1280", w)
	}
}
