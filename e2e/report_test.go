//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
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

	"golang.org/x/net/html"

	"github.com/bootstrap-dev/bootstrap/internal/report"
)

// artifactsDir is where tests keep what a person may want to look at afterwards (screenshots,
// reports): $ARTIFACTS_DIR/<test>, else e2e/artifacts/<test> (gitignored).
func artifactsDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("ARTIFACTS_DIR")
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		root = filepath.Join(wd, "artifacts")
	}
	dir := filepath.Join(root, strings.ReplaceAll(t.Name(), "/", "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// chromium runs headless Chromium on a local file with everything that could reach a network
// switched off: no background services, every host name resolving to nothing. The network log
// it writes lets the caller check that the page requested nothing but itself.
func chromium(t *testing.T, args ...string) []byte {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed (Debian package chromium; make deps installs it): %v", err)
	}
	profile := t.TempDir()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + profile,
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--disable-default-apps", "--host-resolver-rules=MAP * ~NOTFOUND"}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, tail(stderr.String(), 20))
	}
	return stdout.Bytes()
}

// renderedPage opens file in headless Chromium and returns the DOM after rendering, and every URL
// the page made Chromium request (from Chromium's network log).
func renderedPage(t *testing.T, file string) (*html.Node, []string) {
	t.Helper()
	netlog := filepath.Join(t.TempDir(), "netlog.json")
	dom := chromium(t, "--log-net-log="+netlog, "--net-log-capture-mode=Everything", "--dump-dom", "file://"+file)
	doc, err := html.Parse(bytes.NewReader(dom))
	if err != nil {
		t.Fatalf("parse the rendered DOM: %v", err)
	}
	return doc, netlogURLs(t, netlog)
}

// netlogURLs returns the URLs of every request a page made, from a Chromium network log
// (URL_REQUEST_START_JOB events with an origin; Chromium's own background requests have none,
// and the host resolver rules keep them on the machine).
func netlogURLs(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("chromium wrote no network log: %v", err)
	}
	var log struct {
		Constants struct {
			LogEventTypes map[string]int `json:"logEventTypes"`
		} `json:"constants"`
		Events []struct {
			Type   int            `json:"type"`
			Params map[string]any `json:"params"`
		} `json:"events"`
	}
	// Chromium may leave the log's closing brackets out when it exits quickly.
	if err := json.Unmarshal(b, &log); err != nil {
		if err := json.Unmarshal(append(bytes.TrimRight(bytes.TrimSpace(b), ","), []byte("]}")...), &log); err != nil {
			t.Fatalf("network log %s: %v", path, err)
		}
	}
	start, ok := log.Constants.LogEventTypes["URL_REQUEST_START_JOB"]
	if !ok {
		t.Fatalf("network log %s has no URL_REQUEST_START_JOB event type", path)
	}
	var urls []string
	for _, e := range log.Events {
		u, _ := e.Params["url"].(string)
		if e.Type == start && u != "" && e.Params["initiator"] != "not an origin" {
			urls = append(urls, u)
		}
	}
	return urls
}

// section returns the nodes after the <h2 id=id> up to the next <h2>.
func section(doc *html.Node, id string) []*html.Node {
	var h2 *html.Node
	walk(doc, func(n *html.Node) bool {
		if n.Type == html.ElementNode && n.Data == "h2" && attr(n, "id") == id {
			h2 = n
		}
		return h2 == nil
	})
	var out []*html.Node
	for n := h2; n != nil; n = n.NextSibling {
		if n != h2 && n.Type == html.ElementNode && n.Data == "h2" {
			break
		}
		if n != h2 {
			out = append(out, n)
		}
	}
	return out
}

// rows returns the text of every cell of every data row (not header rows) of the tables in nodes.
func rows(nodes []*html.Node) [][]string {
	var out [][]string
	for _, top := range nodes {
		walk(top, func(n *html.Node) bool {
			if n.Type != html.ElementNode || n.Data != "tr" {
				return true
			}
			var cells []string
			header := false
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && (c.Data == "td" || c.Data == "th") {
					header = header || c.Data == "th"
					cells = append(cells, strings.TrimSpace(text(c)))
				}
			}
			if !header && len(cells) > 0 {
				out = append(out, cells)
			}
			return false
		})
	}
	return out
}

// headings returns the text of the <h3> elements in nodes.
func headings(nodes []*html.Node) []string {
	var out []string
	for _, n := range nodes {
		if n.Type == html.ElementNode && n.Data == "h3" {
			out = append(out, strings.TrimSpace(text(n)))
		}
	}
	return out
}

func walk(n *html.Node, fn func(*html.Node) bool) {
	if !fn(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func text(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) bool {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
		return true
	})
	return b.String()
}

func byID(doc *html.Node, id string) *html.Node {
	var found *html.Node
	walk(doc, func(n *html.Node) bool {
		if n.Type == html.ElementNode && attr(n, "id") == id {
			found = n
		}
		return found == nil
	})
	return found
}

var (
	digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	hexRE    = regexp.MustCompile(`^[0-9a-f]{64}$`)
	secsRE   = regexp.MustCompile(`^(\d+\.\d) s$`)
)

// checkReportInChromium writes the lab run's HTML evidence report, renders it in headless
// Chromium and checks every section against the lab: the stages with their times, the preflight
// results, every image content.json lists with its digest, each node's BMC actions and firmware,
// the manifests applied, the generated files with their SHA-256, the versions and the verified
// hash chain. It keeps the report and a screenshot under the test's artifacts dir. Then it edits
// one journal entry and checks the rendered report fails loudly.
func checkReportInChromium(t *testing.T, l *testLab) {
	t.Helper()
	start := time.Now()
	art := artifactsDir(t)
	out := filepath.Join(art, "report.html")
	l.mustRun(t, 0, "report", "--format", "html", "--out", out)
	doc, urls := renderedPage(t, out)
	for _, u := range urls {
		if !strings.HasPrefix(u, "file://") {
			t.Errorf("the report made Chromium request %s; it must be self-contained", u)
		}
	}
	walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		for _, a := range n.Attr {
			if (a.Key == "src" || a.Key == "href" || a.Key == "action") && !strings.HasPrefix(a.Val, "#") {
				t.Errorf("<%s %s=%q>: the report may only link inside itself", n.Data, a.Key, a.Val)
			}
		}
		if n.Data == "script" || n.Data == "link" || n.Data == "iframe" || n.Data == "img" {
			t.Errorf("<%s> in the report: it must be one self-contained file", n.Data)
		}
		if n.Data == "style" && (strings.Contains(text(n), "url(") || strings.Contains(text(n), "@import")) {
			t.Error("the report's style loads something")
		}
		return true
	})
	journal := l.journal(t)

	// The hash chain.
	chain := byID(doc, "chain")
	if chain == nil || !strings.Contains(attr(chain, "class"), "ok") ||
		!strings.Contains(text(chain), fmt.Sprintf("%d entries, hash chain verified", len(journal))) {
		t.Errorf("chain banner: %q, want verified with %d entries", text(chain), len(journal))
	}

	// Timeline: every stage succeeded, with its time.
	timeline := map[string][]string{}
	for _, r := range rows(section(doc, "timeline")) {
		timeline[r[0]] = r
	}
	for _, st := range []string{"preflight", "mirror", "iso", "boot", "install", "configure", "handoff"} {
		r := timeline[st]
		if len(r) < 7 || r[1] != "succeeded" || !secsRE.MatchString(r[6]) || r[4] == "-" || r[5] == "-" {
			t.Errorf("timeline row of %s: %q; want succeeded with start, end and time running", st, r)
		}
	}
	for _, st := range []string{"mirror", "boot", "install"} {
		if r := timeline[st]; len(r) > 6 && r[6] == "0.0 s" {
			t.Errorf("timeline: %s took %s; it cannot take no time in the lab", st, r[6])
		}
	}
	runs := rows(section(doc, "runs"))
	if len(runs) != len(entries(journal, "run-started", "")) {
		t.Errorf("runs table has %d rows, the journal %d runs", len(runs), len(entries(journal, "run-started", "")))
	}
	attempts := rows(section(doc, "attempts"))
	if len(attempts) != len(entries(journal, "stage-started", "")) {
		t.Errorf("attempts table has %d executions, the journal %d stage starts", len(attempts), len(entries(journal, "stage-started", "")))
	}

	// Preflight: the results preflight.json holds, all passing or warning.
	var pf struct {
		Checks []struct{ Name, Status string } `json:"checks"`
	}
	readLabJSON(t, l, "preflight.json", &pf)
	pfRows := rows(section(doc, "preflight"))
	if len(pf.Checks) == 0 || len(pfRows) != len(pf.Checks) {
		t.Errorf("preflight table has %d rows, preflight.json %d checks", len(pfRows), len(pf.Checks))
	}
	for i, r := range pfRows {
		if i < len(pf.Checks) && (r[0] != pf.Checks[i].Name || r[2] != pf.Checks[i].Status || r[2] == "fail") {
			t.Errorf("preflight row %d: %q; preflight.json has %s %s", i, r, pf.Checks[i].Name, pf.Checks[i].Status)
		}
	}

	// Images: every image content.json lists, with its digest.
	c := l.content(t)
	imRows := rows(section(doc, "images"))
	if len(imRows) != len(c.Images) || len(c.Images) < 20 {
		t.Errorf("images table has %d rows, content.json %d images", len(imRows), len(c.Images))
	}
	for i, r := range imRows {
		if i < len(c.Images) && (r[0] != c.Images[i].Source || r[1] != c.Images[i].Dest || r[2] != c.Images[i].Digest ||
			!digestRE.MatchString(r[2])) {
			t.Errorf("image row %d: %q; content.json has %s -> %s %s", i, r, c.Images[i].Source, c.Images[i].Dest, c.Images[i].Digest)
		}
	}

	// BMC actions: every lab node, with its power action.
	bmcSec := section(doc, "bmc")
	nodes := headings(bmcSec)
	if len(nodes) != len(l.Site.Nodes) {
		t.Errorf("BMC actions for %v, want the lab's %d nodes", nodes, len(l.Site.Nodes))
	}
	power := 0
	for _, r := range rows(bmcSec) {
		if len(r) > 5 && r[5] == "power" && r[2] == "boot" {
			power++
		}
	}
	if power != len(l.Site.Nodes) {
		t.Errorf("%d power actions in the BMC section, want one per node (%d)", power, len(l.Site.Nodes))
	}

	// Manifests applied by configure and handoff, each with its SHA-256.
	applied := map[string]int{}
	for _, r := range rows(section(doc, "applied")) {
		secret := len(r) > 6 && strings.HasPrefix(r[4], "Secret ") && r[6] == report.SecretNotHashed
		if len(r) < 7 || !hexRE.MatchString(r[6]) && !secret {
			t.Errorf("applied row %q: no SHA-256", r)
			continue
		}
		applied[r[1]]++
	}
	if applied["configure"] == 0 || applied["handoff"] == 0 {
		t.Errorf("manifests applied by stage: %v; want configure's and handoff's", applied)
	}

	// Files: the generated configs with their real SHA-256.
	files := map[string]string{}
	for _, r := range rows(section(doc, "files")) {
		files[r[0]] = r[2]
	}
	for _, f := range []string{"install-config.yaml", "agent-config.yaml", "content.json", "idms-oc-mirror.yaml", "preflight.json"} {
		b, err := os.ReadFile(filepath.Join(l.workDir(), f))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if files[f] != hex.EncodeToString(sum[:]) {
			t.Errorf("files table: %s sha256 %q, the file's is %x", f, files[f], sum)
		}
	}

	// Versions: the installer, the cluster, and each node's BMC firmware as its simulator reports it.
	versions := map[string]string{}
	for _, r := range rows(section(doc, "versions")) {
		versions[r[0]] = r[1]
	}
	for _, want := range []string{"bootstrap", "openshift-install", "OpenShift (ClusterVersion)", "OpenShift GitOps operator"} {
		if versions[want] == "" {
			t.Errorf("versions table lacks %s: %v", want, versions)
		}
	}
	for _, n := range l.Site.Nodes {
		if fw := l.bmcs.Sims[n.Name].Firmware(); versions["BMC "+n.Name] != fw {
			t.Errorf("versions: BMC %s firmware %q, its iDRAC reports %q", n.Name, versions["BMC "+n.Name], fw)
		}
	}

	// The summary first, then nodes grouped by role and state, a row per node with its MACs, disk,
	// firmware and BMC actions,
	// and the timeline drawn inline.
	var sum string
	for _, n := range section(doc, "summary") {
		sum += text(n)
	}
	if !strings.Contains(sum, "complete: every stage succeeded") ||
		!strings.Contains(sum, fmt.Sprintf("%d images", len(c.Images))) {
		t.Errorf("summary: %q", sum)
	}
	var groups string
	for _, n := range section(doc, "nodes") {
		walk(n, func(m *html.Node) bool {
			if m.Type == html.ElementNode && m.Data == "summary" {
				groups += text(m) + "\n"
			}
			return true
		})
	}
	for _, role := range []string{"master, ", "worker, "} {
		if !strings.Contains(groups, role) {
			t.Errorf("node groups name no %s group: %q", strings.TrimSuffix(role, ", "), groups)
		}
	}
	nodeRows := rows(section(doc, "nodes"))
	if len(nodeRows) != len(l.Site.Nodes) {
		t.Errorf("nodes table has %d rows, the lab %d nodes", len(nodeRows), len(l.Site.Nodes))
	}
	for i, r := range nodeRows {
		if i < len(l.Site.Nodes) {
			n := l.Site.Nodes[i]
			// node, MACs, root disk, firmware, media, power actions, BMC actions, last action; the
			// role and state are the group's (the matrix groups nodes by role and state).
			if len(r) < 8 || r[0] != n.Name || r[2] != n.RootDevice ||
				r[3] != l.bmcs.Sims[n.Name].Firmware() || r[6] == "0" {
				t.Errorf("node row %d: %q", i, r)
			}
		}
	}
	svg := 0
	walk(section(doc, "timeline")[0].Parent, func(n *html.Node) bool {
		if n.Type == html.ElementNode && n.Data == "rect" {
			svg++
		}
		return true
	})
	if svg < 7 {
		t.Errorf("timeline draws %d bars, want at least one per stage", svg)
	}
	for _, r := range runs {
		if len(r) < 3 || !strings.Contains(r[2], "@") {
			t.Errorf("runs row %q does not say who ran it where", r)
		}
	}

	shot := screenshot(t, out, filepath.Join(art, "report.png"))
	t.Logf("evidence report %s, screenshot %s (rendered, checked and captured in %s)", out, shot, time.Since(start).Round(time.Millisecond))

	// Edit one journal entry: the rendered report says so at the top, loudly.
	path := filepath.Join(l.workDir(), "journal.jsonl")
	tamperJournal(t, path)
	tampered := filepath.Join(art, "report-tampered.html")
	if r := l.run(t, "report", "--format", "html", "--out", tampered); r.code != 6 { // exit 6: journal integrity failure
		t.Errorf("report of an edited journal: exit %d, want 6\n%s", r.code, tail(r.out, 10))
	}
	doc, _ = renderedPage(t, tampered)
	chain = byID(doc, "chain")
	if chain == nil || !strings.Contains(attr(chain, "class"), "bad") || !strings.Contains(text(chain), "JOURNAL HASH CHAIN BROKEN") ||
		!strings.Contains(text(chain), "nothing below can be trusted") {
		t.Errorf("tampered journal: chain banner %q, want the loud failure", text(chain))
	}
	t.Logf("tampered report %s, screenshot %s", tampered, screenshot(t, tampered, filepath.Join(art, "report-tampered.png")))
}

// screenshot renders file into png (1280×4000) and checks the image has content.
func screenshot(t *testing.T, file, out string) string {
	t.Helper()
	chromium(t, "--screenshot="+out, "--window-size=1280,4000", "--hide-scrollbars", "file://"+file)
	f, err := os.Open(out)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(bufio.NewReader(f))
	if err != nil {
		t.Fatalf("screenshot %s: %v", out, err)
	}
	b := img.Bounds()
	if b.Dx() != 1280 || b.Dy() != 4000 {
		t.Errorf("screenshot %s is %dx%d, want 1280x4000", out, b.Dx(), b.Dy())
	}
	// A page that rendered shows text: many pixels are not the background's white.
	dark := 0
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			if r, g, bb, _ := img.At(x, y).RGBA(); r+g+bb < 3*0x8000 {
				dark++
			}
		}
	}
	if dark < 1000 {
		t.Errorf("screenshot %s is nearly blank (%d dark samples)", out, dark)
	}
	return out
}

// tamperJournal changes one character of a step's data in the middle of the journal, keeping it
// valid JSON, as someone editing the record would.
func tamperJournal(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(b, []byte("\n"))
	for i := 0; i < len(lines)-2; i++ {
		if j := bytes.Index(lines[i], []byte(`"digest":"sha256:`)); j >= 0 && bytes.Contains(lines[i], []byte(`"kind":"step-done"`)) {
			k := j + len(`"digest":"sha256:`)
			if lines[i][k] == '0' {
				lines[i][k] = '1'
			} else {
				lines[i][k] = '0'
			}
			if err := os.WriteFile(path, bytes.Join(lines, []byte("\n")), 0o600); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatal("no step with a digest in the journal to edit")
}

func readLabJSON(t *testing.T, l *testLab, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(l.workDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// The no-request check of checkReportInChromium can fail: a page that loads an image from a
// host is caught in Chromium's network log (the host resolver rules keep the request local).
func TestChromiumCatchesExternalRequests(t *testing.T) {
	page := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(page, []byte(`<!DOCTYPE html><html><body><h2 id="a">a</h2>`+
		`<img src="http://registry.invalid/logo.png"><table><tr><th>h</th></tr><tr><td>1</td></tr></table></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, urls := renderedPage(t, page)
	if len(urls) != 1 || urls[0] != "http://registry.invalid/logo.png" {
		t.Errorf("requests seen: %v, want the image's", urls)
	}
	if r := rows(section(doc, "a")); len(r) != 1 || r[0][0] != "1" {
		t.Errorf("rows of section a: %v", r)
	}
}
