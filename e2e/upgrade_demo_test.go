//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/e2e/lab/harness"
	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// demoTarget is two minors from the lab's 4.18.0: 4.18.0 -> 4.19.2 -> 4.20.1 (the graph-data
// removed 4.18 -> 4.19.1; 4.19.2 -> 4.20.1 is conditional on a risk no cluster object decides).
const demoTarget = "4.20.1"

// TestDemoUpgrade is `make demo-upgrade`: a two-minor upgrade on the lab's own releases and update
// service, planned and run by the built binary, every command and its output printed.
//
//  1. What the site carried a month earlier: 4.18.0 and older z-streams of 4.19 and 4.20, and the
//     update graph from the lab's update service (to disk, then into the mirror registry), with
//     the next minors' catalogs.
//  2. `upgrade plan --to 4.20.1` against the cluster, the conditional edge accepted by a named
//     person, its delta written; then `-o json > plan.json`.
//  3. The delta to disk, into the registry with the lab's signature store, verified: the hops'
//     releases by digest, their signature ConfigMap, the bundle and driver images the plan needs.
//  4. `upgrade run --plan plan.json`, the signature ConfigMap and the IDMS/CatalogSources taken
//     from the delta's outputs: per hop an etcd backup over OpenSSH, canary gpu-0 first, the CVO
//     accepting each release only with a signature from the lab's key; then `report`.
func TestDemoUpgrade(t *testing.T) {
	u := startUpgradeDemo(t)
	s := u.lab.Site
	lab := func(p string) string { return filepath.Join("lab", p) }
	src := []string{"--source-registry", s.Mirror.Source.Registry, "--src-ca-file", lab(s.Mirror.Source.CAFile)}
	dest := []string{"--ca-file", lab(s.Registry.CAFile), "--authfile", lab(s.Registry.AuthFile), "docker://" + s.Registry.Host + "/" + s.Registry.Namespace}
	toRegistry := func(isc, disk, ws string, extra ...string) { // disk to registry, with the signatures
		u.bootstrap(nil, 0, append(append([]string{"mirror", "-c", isc, "--from", "file://" + disk, "--workspace", "file://" + ws,
			"--signature-store", u.up.SignatureStore()}, extra...), dest...)...)
	}

	// 1. A month earlier.
	carry := u.write("carry.yaml", iscDoc(true, map[string]string{"stable-4.18": harness.ReleaseVersion, "stable-4.19": "4.19.1", "stable-4.20": "4.20.0"}, ""))
	u.bootstrap(nil, 0, append(append([]string{"mirror", "-c", carry, "--update-url", u.up.UpdateURL()}, src...), "file://carry")...)
	toRegistry(carry, "carry", "carried")
	graph := filepath.Join("carried", "working-dir", "cluster-resources")
	carryCatalogs(t, u.lab.Dir, s.Mirror.Source.Registry, filepath.Join(u.dir, graph))
	fmt.Fprintf(os.Stdout, "(the v4.19-v4.21 catalogs' file-based configs are under %s/%s/<minor>/, as a registry run writes the catalogs it mirrors)\n", graph, upgrade.CatalogsDir)

	// 2. The plan.
	plan := []string{"upgrade", "plan", "--to", demoTarget, "--graph", graph, "--kubeconfig", "kubeconfig",
		"--accept-risk", harness.ConditionalRisk + "=Demo User", "--isc", "delta.yaml"}
	u.bootstrap(nil, 0, plan...)
	u.bootstrap(u.file("plan.json"), 0, append(plan, "-o", "json")...)
	p, err := upgrade.ParsePlan(u.read("plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkDemoPlan(t, p, u.up)
	fmt.Fprintf(os.Stdout, "\n$ cat delta.yaml\n%s", u.read("delta.yaml"))

	// 3. The delta, carried and verified.
	u.bootstrap(nil, 0, append(append([]string{"mirror", "-c", "delta.yaml"}, src...), "file://delta")...)
	toRegistry("delta.yaml", "delta", "delta-ws")
	u.bootstrap(nil, 0, append([]string{"mirror", "-c", "delta.yaml", "--verify", "--workspace", "file://delta-ws"}, dest...)...)
	out := filepath.Join("delta-ws", "working-dir", "cluster-resources")

	// 4. The upgrade, then the report.
	u.bootstrap(nil, 0, "--dir", ".bootstrap", "upgrade", "run", "--plan", "plan.json", "--kubeconfig", "kubeconfig",
		"--signatures", out, "--mirror-config", out, "--canary", demoCanary, "--soak", "5s", "--poll", "200ms",
		"--backup-node", "m0="+u.sshd.Addr, "--ssh-key", u.sshd.KeyFile, "--ssh-user", u.sshd.User, "--backup-script", u.script,
		"--backup-dir", filepath.Join(u.dir, "node-assets"), "--accept-rollback-contract", "Demo User")
	var rep strings.Builder
	u.bootstrap(&rep, 0, "--dir", ".bootstrap", "report")
	sec := upgradeSection(t, rep.String())
	fmt.Fprintf(os.Stdout, "\n%s\n", sec)
	checkDemoReport(t, sec)
	checkDemoCluster(t, u)
	fmt.Fprintf(os.Stdout, "\nthe demo took %s\n", time.Since(u.began).Round(time.Second))
}

// checkDemoPlan: two hops over the lab's payloads by digest, the second conditional and accepted
// by the named person, the GPU Operator updated to 25.10.0 after the first hop so the second
// passes its range, nothing blocking, the graph hash-verified.
func checkDemoPlan(t *testing.T, p *upgrade.Plan, up *harness.Updates) {
	t.Helper()
	var hops []string
	for _, h := range p.Hops {
		hops = append(hops, h.From+" -> "+h.To)
		if want := "quay.io/openshift-release-dev/ocp-release@" + up.Digests[h.To]; h.Payload != want {
			t.Errorf("hop %s: payload %s, want the lab's %s", h.To, h.Payload, want)
		}
	}
	if got := strings.Join(hops, ", "); got != "4.18.0 -> 4.19.2, 4.19.2 -> 4.20.1" {
		t.Fatalf("hops %s", got)
	}
	if p.Hops[1].Edge != "conditional" || len(p.Accepts) != 1 || p.Accepts[0].Risk != harness.ConditionalRisk || p.Accepts[0].By != "Demo User" {
		t.Errorf("hop 4.20.1: edge %s, acceptances %+v", p.Hops[1].Edge, p.Accepts)
	}
	if len(p.Blockers) > 0 || !p.Graph.Verified {
		t.Errorf("blockers %v, graph verified %v", p.Blockers, p.Graph.Verified)
	}
	if csvs := p.Hops[0].CSVs(false); !slices.Equal(csvs, []string{"gpu-operator-certified.v25.10.0"}) {
		t.Errorf("after hop 4.19.2 the plan installs %v, want the GPU Operator 25.10.0", csvs)
	}
	if !slices.ContainsFunc(p.Hops[1].Gate, func(v upgrade.Verdict) bool {
		return v.Check == "nvidia-range" && v.Subject == "gpu-operator-certified 25.10.0" && v.Result == "pass"
	}) {
		t.Errorf("hop 4.20.1's gate does not pass the GPU Operator 25.10.0: %+v", p.Hops[1].Gate)
	}
}

// upgradeSection is the report's upgrade section (to the next top-level section).
func upgradeSection(t *testing.T, md string) string {
	t.Helper()
	i := strings.Index(md, "## Upgrade")
	if i < 0 {
		t.Fatalf("the report has no upgrade section:\n%s", md)
	}
	sec := md[i:]
	if j := strings.Index(sec[1:], "\n## "); j > 0 {
		sec = sec[:j+1]
	}
	return sec
}

// checkDemoReport: both hops succeeded in a verified chain, each with its backups (hashes) before
// and after, the signature ConfigMap applied, the CVO's verified history, and the canary's GPU
// driver pod for the hop's OS build.
func checkDemoReport(t *testing.T, sec string) {
	t.Helper()
	want := []string{"hash chain **verified**"}
	for _, v := range []string{"4.19.2", "4.20.1"} {
		want = append(want, "### hop-"+v+": succeeded", "ClusterVersion history "+v+" Completed, signature verified by the CVO: true",
			"GPU driver pod "+upgradetest.GPUNamespace+"/nvidia-driver-daemonset-"+upgradetest.OSBuild(v)+"-"+demoCanary+" Ready")
	}
	for _, w := range want {
		if !strings.Contains(sec, w) {
			t.Errorf("the upgrade section lacks %q", w)
		}
	}
	// per hop: a backup before and after, each with the snapshot's hash; the signature ConfigMap
	var before, after, sigs int
	for _, line := range strings.Split(sec, "\n") {
		switch {
		case strings.Contains(line, "| etcd-backup | etcd backup before the hop on m0: snapshot_") && strings.Contains(line, "sha256 "):
			before++
		case strings.Contains(line, "| etcd-backup-after | etcd backup after the hop on m0: snapshot_") && strings.Contains(line, "sha256 "):
			after++
		case strings.Contains(line, "| signatures | signature ConfigMaps: ConfigMap "+upgrade.SignatureNamespace+"/") &&
			!strings.Contains(line, "CatalogSource") && !strings.Contains(line, "MirrorSet"): // only the signatures, not the mirror config beside them
			sigs++
		}
	}
	if before != 2 || after != 2 || sigs != 2 {
		t.Errorf("the upgrade section has %d backups before a hop, %d after, %d signature ConfigMap steps; want 2 of each", before, after, sigs)
	}
}

// checkDemoCluster: the cluster ends at the target, and the signatures the run applied are the
// delta's, each hop's verifying with the lab's key to the hop's digest.
func checkDemoCluster(t *testing.T, u *upgradeDemo) {
	t.Helper()
	ctx := context.Background()
	cv, err := u.d.Resource(clustertest.ClusterVersions).Get(ctx, "version", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hist, _, _ := unstructured.NestedSlice(cv.Object, "status", "history")
	var got []string
	for _, h := range hist {
		m, _ := h.(map[string]any)
		got = append(got, fmt.Sprintf("%v %v", m["version"], m["state"]))
	}
	if strings.Join(got, ", ") != "4.20.1 Completed, 4.19.2 Completed, 4.18.0 Completed" {
		t.Errorf("ClusterVersion history: %s", strings.Join(got, ", "))
	}
	l, err := u.d.Resource(clustertest.GVR("", "v1", "configmaps")).Namespace(upgrade.SignatureNamespace).List(ctx, metav1.ListOptions{LabelSelector: mirror.SignatureLabel})
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, cm := range l.Items {
		bd, _, _ := unstructured.NestedStringMap(cm.Object, "binaryData")
		for k, v := range bd {
			keys[k] = v
		}
	}
	for _, v := range []string{"4.19.2", "4.20.1"} {
		dg := u.up.Digests[v]
		sig, err := base64.StdEncoding.DecodeString(keys[strings.Replace(dg, ":", "-", 1)+"-1"])
		if err != nil || len(sig) == 0 {
			t.Errorf("the cluster has no signature ConfigMap key for %s (%s)", v, dg)
			continue
		}
		if signed, err := harness.VerifyReleaseSignature(filepath.Join(u.lab.Dir, harness.ReleaseKeyFile), sig); err != nil || signed != dg {
			t.Errorf("%s: the signature applied verifies to %q with the lab key: %v", v, signed, err)
		}
	}
}
