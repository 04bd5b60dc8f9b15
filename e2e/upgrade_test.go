//go:build e2e

package e2e

import (
	"archive/tar"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/config"
	"github.com/regclient/regclient/types/manifest"
	"github.com/regclient/regclient/types/ref"

	"github.com/bootstrap-dev/bootstrap/e2e/lab/harness"
	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
)

// TestUpgradePlanAndDeltaMirror is day 2 in the lab: after the whole pipeline installed 4.18.0,
// the site carried, a month earlier, the update graph (from the lab's update service) and older
// z-streams of 4.19, 4.20 and 4.21 into its registry. `bootstrap upgrade plan --to 4.21.1`
// against the lab cluster prints a three-hop plan (4.18.0 -> 4.19.2 -> 4.20.1 -> 4.21.1: the
// graph-data removed 4.18.0 -> 4.19.1, the 4.20.1 hop is conditional and accepted by a named
// person), every verdict with its source; the delta it writes is mirrored to disk, then to the
// registry with the signature store, then verified: it holds each hop's release and components
// by digest, their cosign .sig tags, the signature ConfigMap (verified with the lab's key), the
// target catalogs filtered, the driver image, and nothing the earlier carry held.
func TestUpgradePlanAndDeltaMirror(t *testing.T) {
	l := startLab(t)
	l.until = "" // the cluster's Subscriptions come through the handoff's Argo CD
	l.mustRun(t, 0, "run")
	var up *harness.Updates
	for _, c := range l.Components() {
		if u, ok := c.(*harness.Updates); ok {
			up = u
		}
	}
	if up == nil {
		t.Fatal("the default lab has no update service")
	}
	s := labSite(t, l)
	src := []string{"--source-registry", s.Mirror.Source.Registry, "--src-ca-file", s.Mirror.Source.CAFile}
	dest := "docker://" + s.Registry.Host + "/" + s.Registry.Namespace
	auth := []string{"--ca-file", s.Registry.CAFile, "--authfile", s.Registry.AuthFile}

	// A month earlier: the graph and older z-streams, carried to the registry.
	before := writeFile(t, "before.yaml", iscDoc(true, map[string]string{"stable-4.18": harness.ReleaseVersion,
		"stable-4.19": harness.CarriedBefore[1], "stable-4.20": harness.CarriedBefore[2], "stable-4.21": harness.CarriedBefore[3]}, ""))
	beforeDisk, wsBefore := t.TempDir(), t.TempDir()
	l.mustRun(t, 0, append(append([]string{"mirror", "-c", before, "--update-url", up.UpdateURL()}, src...), "file://"+beforeDisk)...)
	l.mustRun(t, 0, append(append([]string{"mirror", "-c", before, "--from", "file://" + beforeDisk, "--workspace", "file://" + wsBefore,
		"--signature-store", up.SignatureStore()}, auth...), dest)...)
	graph := filepath.Join(wsBefore, "working-dir", "cluster-resources")
	carryCatalogs(t, l.Dir, s.Mirror.Source.Registry, graph)

	// The plan, against the lab cluster.
	delta := filepath.Join(t.TempDir(), "delta.yaml")
	planArgs := []string{"upgrade", "plan", "--to", harness.UpgradeTarget, "--graph", graph, "--kubeconfig", filepath.Join(l.workDir(), "kubeconfig"),
		"--accept-risk", harness.ConditionalRisk + "=Lab Operator"}
	table := l.run(t, append(planArgs, "--isc", delta)...)
	t.Logf("sample plan (exit %d):\n%s", table.code, table.out)
	js := l.run(t, append(planArgs, "--isc", delta+".json-run", "-o", "json")...) // without --isc a release not carried is refused
	var p upgrade.Plan
	if err := json.Unmarshal(resultData(t, js.out), &p); err != nil {
		t.Fatalf("plan -o json: %v\n%s", err, js.out)
	}
	checkLabPlan(t, &p, up, table, js)
	if b, err := os.ReadFile(delta); err == nil {
		t.Logf("the delta ImageSetConfiguration:\n%s", b)
	}

	// The delta, to disk and into the registry, verified.
	deltaDisk, wsDelta := t.TempDir(), t.TempDir()
	l.mustRun(t, 0, append(append([]string{"mirror", "-c", delta}, src...), "file://"+deltaDisk)...)
	l.mustRun(t, 0, append(append([]string{"mirror", "-c", delta, "--from", "file://" + deltaDisk, "--workspace", "file://" + wsDelta,
		"--signature-store", up.SignatureStore()}, auth...), dest)...)
	l.mustRun(t, 0, append(append([]string{"mirror", "-c", delta, "--verify", "--workspace", "file://" + wsDelta}, auth...), dest)...)
	out := filepath.Join(wsDelta, "working-dir", "cluster-resources")
	checkDelta(t, l, up, readContent(t, filepath.Join(deltaDisk, "content.json")), readContent(t, filepath.Join(graph, "content.json")), out)

	// The same channels mirrored whole, for the size of the delta against it.
	minors := []string{"4.19", "4.20", "4.21"}
	fullDisk := t.TempDir()
	full := writeFile(t, "full.yaml", iscDoc(false, map[string]string{"stable-4.18": "", "stable-4.19": "", "stable-4.20": "", "stable-4.21": ""}, fullOperators(minors)))
	l.mustRun(t, 0, append(append([]string{"mirror", "-c", full}, src...), "file://"+fullDisk)...)
	dsz, fsz := dirSize(t, deltaDisk), dirSize(t, fullDisk)
	t.Logf("delta mirror %d bytes (%d images), full mirror of the same channels %d bytes (%d images): %.0f%%",
		dsz, len(readContent(t, filepath.Join(deltaDisk, "content.json")).Images), fsz, len(readContent(t, filepath.Join(fullDisk, "content.json")).Images), 100*float64(dsz)/float64(fsz))
	if dsz >= fsz {
		t.Errorf("the delta (%d bytes) is not smaller than the full mirror (%d bytes)", dsz, fsz)
	}
}

// checkLabPlan: three hops over the lab's payloads by digest, the blocked edge named, the
// conditional risk accepted by the named person, every verdict and step sourced; the GPU
// Operator 25.3's declared range (to 4.19) blocks the 4.20 hop, so the plan exits 2.
func checkLabPlan(t *testing.T, p *upgrade.Plan, up *harness.Updates, table, js result) {
	t.Helper()
	var hops []string
	for _, h := range p.Hops {
		hops = append(hops, h.From+" -> "+h.To)
		if want := "quay.io/openshift-release-dev/ocp-release@" + up.Digests[h.To]; h.Payload != want {
			t.Errorf("hop %s: payload %s, want %s", h.To, h.Payload, want)
		}
		if h.Carried != "no" {
			t.Errorf("hop %s: carried %q, want no (the earlier carry holds other z-streams)", h.To, h.Carried)
		}
		for _, v := range h.Gate {
			if strings.TrimSpace(v.Source) == "" {
				t.Errorf("hop %s: verdict %s %s has no source", h.To, v.Check, v.Subject)
			}
		}
		for _, st := range append(append([]upgrade.Step(nil), h.Before...), h.After...) {
			if strings.TrimSpace(st.Source) == "" {
				t.Errorf("hop %s: step %q has no source", h.To, st.Action)
			}
		}
	}
	if got := strings.Join(hops, ", "); got != "4.18.0 -> 4.19.2, 4.19.2 -> 4.20.1, 4.20.1 -> 4.21.1" {
		t.Fatalf("hops %s\n%s", got, table.out)
	}
	if p.Hops[1].Edge != "conditional" || len(p.Accepts) != 1 || p.Accepts[0].Risk != harness.ConditionalRisk || p.Accepts[0].By != "Lab Operator" {
		t.Errorf("hop 4.20.1: edge %s, acceptances %+v", p.Hops[1].Edge, p.Accepts)
	}
	// the update service already left 4.18.0 -> 4.19.1 out (graph-data's BlockedRisk): the path
	// goes through 4.19.2 (checked above), and the graph-data was carried and hash-verified
	if !p.Graph.Verified || p.Graph.DataVersion != "1.2.0" {
		t.Errorf("graph: verified %v, graph-data version %q", p.Graph.Verified, p.Graph.DataVersion)
	}
	if table.code != 2 || js.code != 2 || !slices.ContainsFunc(p.Blockers, func(s string) bool { return strings.Contains(s, "gpu-operator-certified 25.3.1") }) {
		t.Errorf("exit %d/%d, blockers %v: want the GPU Operator 25.3 range blocking", table.code, js.code, p.Blockers)
	}
	for _, want := range []string{"4.19.2", "4.20.1", "4.21.1", harness.ConditionalRisk, "Lab Operator", "nvcr.io/nvidia/driver:570.148.08-rhel9.6"} {
		if !strings.Contains(table.out, want) {
			t.Errorf("the plan table does not name %q", want)
		}
	}
}

// checkDelta: the delta disk mirror holds each hop's release by digest with its components and
// cosign signature, the filtered catalogs, the driver image, and no image the earlier carry held;
// the registry run wrote the signature ConfigMap, each signature verifying with the lab's key.
func checkDelta(t *testing.T, l *testLab, up *harness.Updates, delta, before mirror.Content, out string) {
	t.Helper()
	kinds := map[mirror.Kind]int{}
	releases := map[string]bool{}
	had := map[string]bool{}
	for _, im := range before.Images {
		had[im.Digest] = true
	}
	for _, im := range delta.Images {
		kinds[im.Kind]++
		if im.Kind == mirror.KindRelease {
			releases[im.Digest] = true
		}
		if had[im.Digest] && im.Kind != mirror.KindCatalog {
			t.Errorf("the delta carries %s (%s) again: the earlier carry has it", im.Source, im.Digest)
		}
	}
	for _, v := range []string{"4.19.2", "4.20.1", "4.21.1"} {
		if !releases[up.Digests[v]] {
			t.Errorf("the delta lacks release %s (%s)", v, up.Digests[v])
		}
	}
	t.Logf("delta content by kind: %v", kinds)
	if len(releases) != 3 || kinds[mirror.KindReleaseComponent] != 3*harness.UpgradeComponents || kinds[mirror.KindSignature] < 3 ||
		kinds[mirror.KindCatalog] == 0 || kinds[mirror.KindBundle] == 0 || kinds[mirror.KindAdditional] != 1 {
		t.Errorf("delta kinds %v, want 3 releases, %d components, their .sig tags, catalogs, bundles and one driver image", kinds, 3*harness.UpgradeComponents)
	}
	b, err := os.ReadFile(filepath.Join(out, mirror.SignatureConfigMapJSON))
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Metadata struct {
			Namespace string
			Labels    map[string]string
		}
		BinaryData map[string]string `json:"binaryData"`
	}
	if err := json.Unmarshal(b, &cm); err != nil {
		t.Fatal(err)
	}
	if _, ok := cm.Metadata.Labels[mirror.SignatureLabel]; !ok || cm.Metadata.Namespace != upgrade.SignatureNamespace {
		t.Errorf("signature ConfigMap %+v", cm.Metadata)
	}
	for _, v := range []string{"4.19.2", "4.20.1", "4.21.1"} {
		key := strings.Replace(up.Digests[v], ":", "-", 1) + "-1"
		sig, err := base64.StdEncoding.DecodeString(cm.BinaryData[key])
		if err != nil || len(sig) == 0 {
			t.Errorf("signature ConfigMap lacks %s (%s)", key, v)
			continue
		}
		if got, err := harness.VerifyReleaseSignature(filepath.Join(l.Dir, harness.ReleaseKeyFile), sig); err != nil || got != up.Digests[v] {
			t.Errorf("%s: signature verifies to %q: %v", v, got, err)
		}
	}
	if len(cm.BinaryData) != 3 {
		t.Errorf("signature ConfigMap has %d keys, want the 3 hops'", len(cm.BinaryData))
	}
}

// carryCatalogs writes the lab source's v4.19..v4.21 catalogs, whole, under
// dir/catalogs/<minor>/<the CatalogSource name the lab's Subscriptions use>, as upgrade plan reads
// them: the catalogs' metadata without their images, so the plan sees bundles the carry does not
// hold and the delta brings them (filtered). A registry run writes the same layout for the
// catalogs it mirrored (TestMirrorCommandFilteredCatalogSneakernet), filtered to what it carried.
func carryCatalogs(t *testing.T, labDir, source, dir string) {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(labDir, harness.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	rc := regclient.New(regclient.WithConfigHost(config.Host{Name: source, RegCert: string(ca)}))
	for _, minor := range []string{"4.19", "4.20", "4.21"} {
		for repo, cs := range map[string]string{"redhat-operator-index": harness.CatalogRedHat, "certified-operator-index": harness.CatalogCertified} {
			n := catalogConfigs(t, rc, source+"/redhat/"+repo+":v"+minor, filepath.Join(dir, upgrade.CatalogsDir, minor, cs))
			if n == 0 {
				t.Fatalf("%s:v%s has no configs", repo, minor)
			}
		}
	}
}

// catalogConfigs writes the files under configs/ of the last layer of image that has any (the
// catalog's configs layer, below its cache layer) into dir and returns how many.
func catalogConfigs(t *testing.T, rc *regclient.RegClient, image, dir string) int {
	t.Helper()
	r, err := ref.New(image)
	if err != nil {
		t.Fatal(err)
	}
	m, err := rc.ManifestGet(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := m.(manifest.Imager).GetLayers()
	if err != nil {
		t.Fatal(err)
	}
	for i := len(ls) - 1; i >= 0; i-- {
		br, err := rc.BlobGet(t.Context(), r, ls[i])
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(br)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		tr := tar.NewReader(zr)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			name := strings.TrimPrefix(h.Name, "/")
			if h.Typeflag != tar.TypeReg || !strings.HasPrefix(name, "configs/") || strings.Contains(name, "..") {
				continue
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			writeAt(t, filepath.Join(dir, strings.TrimPrefix(name, "configs/")), b)
			n++
		}
		_ = br.Close()
		if n > 0 {
			return n
		}
	}
	return 0
}

type labSiteFields struct {
	Registry struct{ Host, Namespace, CAFile, AuthFile string }
	Mirror   struct {
		Source struct{ Registry, CAFile string }
	}
}

func labSite(t *testing.T, l *testLab) labSiteFields {
	t.Helper()
	b, err := os.ReadFile(l.SiteFile)
	if err != nil {
		t.Fatal(err)
	}
	var s labSiteFields
	if err := json.Unmarshal(b[strings.IndexByte(string(b), '{'):], &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// iscDoc is an ImageSetConfiguration: per channel, one release (min = max) or the whole
// channel ("").
func iscDoc(graph bool, channels map[string]string, operators string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  platform:\n    graph: %v\n    architectures: [amd64]\n    channels:\n", graph)
	names := make([]string, 0, len(channels))
	for ch := range channels {
		names = append(names, ch)
	}
	slices.Sort(names)
	for _, ch := range names {
		if v := channels[ch]; v != "" {
			fmt.Fprintf(&b, "    - name: %s\n      minVersion: %s\n      maxVersion: %s\n", ch, v, v)
		} else {
			fmt.Fprintf(&b, "    - name: %s\n      full: true\n", ch)
		}
	}
	return b.String() + operators
}

// fullOperators selects, in each minor's catalogs, the packages the lab subscribes to, whole.
func fullOperators(minors []string) string {
	var b strings.Builder
	b.WriteString("  operators:\n")
	for _, m := range minors {
		fmt.Fprintf(&b, "    - catalog: registry.redhat.io/redhat/certified-operator-index:v%s\n      packages:\n        - name: gpu-operator-certified\n        - name: nvidia-network-operator\n", m)
		fmt.Fprintf(&b, "    - catalog: registry.redhat.io/redhat/redhat-operator-index:v%s\n      packages:\n        - name: sriov-network-operator\n", m)
	}
	b.WriteString("  additionalImages:\n    - name: nvcr.io/nvidia/driver:570.148.08-rhel9.6\n")
	return b.String()
}

func readContent(t *testing.T, path string) mirror.Content {
	t.Helper()
	c, err := mirror.ReadContent(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	writeAt(t, p, []byte(body))
	return p
}

func writeAt(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
