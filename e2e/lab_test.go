//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/e2e/lab/harness"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// binary is bin/bootstrap as `make e2e` built it, or $BOOTSTRAP_BIN; built once when neither
// exists (go test -tags e2e ./e2e/ alone).
func binary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if p := os.Getenv("BOOTSTRAP_BIN"); p != "" {
			binPath = p
			return
		}
		// Built from this tree every time (go build is incremental): a bin/bootstrap left from an
		// earlier build would test old code. `make e2e` passes its stamped build in BOOTSTRAP_BIN.
		binPath = filepath.Join(os.TempDir(), "bootstrap-e2e-bin")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/bootstrap-dev/bootstrap/cmd/bootstrap").CombinedOutput()
		if err != nil {
			binErr = errors.New("go build: " + err.Error() + "\n" + string(out))
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// sourceCache holds the seeded source registry storage every lab of this test binary copies.
var sourceCache string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bootstrap-e2e-source-")
	if err != nil {
		panic(err)
	}
	sourceCache = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// testLab is a running lab with handles on the stand-ins the tests inspect.
type testLab struct {
	*harness.Lab
	bin  string
	reg  *harness.Registry
	bmcs *harness.BMCs
	// cluster plays the cluster; tests that add a node tell it with Join.
	cluster *harness.Cluster
	// git serves the site's GitOps repository; tests push to it with Commit.
	git *harness.Git
	// until, when set, is added as --until to `run`: the kill, fault and change tests exercise
	// the stages up to boot, where their faults live, and skip the ~20 s kube-apiserver start of
	// every resume. The whole-pipeline tests clear it.
	until string
}

func startLab(t *testing.T) *testLab {
	t.Helper()
	l, err := harness.New(t.TempDir(), harness.Default(harness.Options{SourceCache: sourceCache})...)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Up(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = l.Down(ctx)
	})
	tl := &testLab{Lab: l, bin: binary(t), until: "boot"}
	for _, c := range l.Components() {
		switch c := c.(type) {
		case *harness.Registry:
			tl.reg = c
		case *harness.BMCs:
			tl.bmcs = c
		case *harness.Cluster:
			tl.cluster = c
		case *harness.Git:
			tl.git = c
		}
	}
	if tl.reg == nil || tl.bmcs == nil {
		t.Fatal("the default lab has no registry or no BMCs")
	}
	// Cleanups run last-registered first: Argo CD is looked at before the lab stops (its logs
	// stay until t.TempDir is removed, after).
	t.Cleanup(func() {
		if tl.cluster != nil {
			for _, r := range tl.cluster.ArgoRestarts() {
				t.Logf("the lab restarted an Argo CD process, as a kubelet would: %s", r)
			}
		}
		if t.Failed() {
			logArgo(t, filepath.Join(l.Dir, "argocd", "logs"))
		}
	})
	return tl
}

// result is one finished invocation of the binary.
type result struct {
	code int
	out  string // stdout and stderr, interleaved
	took time.Duration
}

// run runs the binary with args in the lab dir (-f site.yaml is added when args has no -f).
func (l *testLab) run(t *testing.T, args ...string) result {
	t.Helper()
	cmd := l.command(args...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	start := time.Now()
	err := cmd.Run()
	r := result{out: buf.String(), took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("%v: %v", args, err)
	}
	t.Logf("$ bootstrap %s -> exit %d in %s", strings.Join(args, " "), r.code, r.took.Round(time.Millisecond))
	return r
}

func (l *testLab) command(args ...string) *exec.Cmd {
	hasF := false
	for _, a := range args {
		hasF = hasF || a == "-f"
	}
	if !hasF {
		args = append(args, "-f", l.SiteFile)
	}
	if len(args) > 0 && args[0] == "run" && l.until != "" && !slices.Contains(args, "--until") {
		args = append(args, "--until", l.until)
	}
	cmd := exec.Command(l.bin, args...)
	cmd.Dir = l.Dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	return cmd
}

// mustRun fails the test unless the binary exits with want.
func (l *testLab) mustRun(t *testing.T, want int, args ...string) result {
	t.Helper()
	r := l.run(t, args...)
	if r.code != want {
		t.Fatalf("bootstrap %s: exit %d, want %d\n%s", strings.Join(args, " "), r.code, want, tail(r.out, 60))
	}
	return r
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (l *testLab) workDir() string { return filepath.Join(l.Dir, ".bootstrap") }

// journal reads every entry of the lab run's journal.
func (l *testLab) journal(t *testing.T) []pipeline.Entry {
	t.Helper()
	j, err := readJournal(filepath.Join(l.workDir(), "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// journalQuiet is journal for polling: a journal that does not exist yet is empty.
func (l *testLab) journalQuiet() []pipeline.Entry {
	j, _ := readJournal(filepath.Join(l.workDir(), "journal.jsonl"))
	return j
}

func readJournal(path string) ([]pipeline.Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []pipeline.Entry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e pipeline.Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			continue // a torn last line after SIGKILL
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// entries filters the journal by kind and stage ("" matches any stage).
func entries(j []pipeline.Entry, kind pipeline.EntryKind, stage string) []pipeline.Entry {
	var out []pipeline.Entry
	for _, e := range j {
		if e.Kind == kind && (stage == "" || e.Stage == stage) {
			out = append(out, e)
		}
	}
	return out
}

// powerActions maps node to the reset actions its simulated iDRAC accepted.
func (l *testLab) powerActions() map[string]int {
	m := map[string]int{}
	for n, s := range l.bmcs.Sims {
		m[n] = s.Stats().PowerActions
	}
	return m
}

// bmcWrites maps node to the write requests its iDRAC received.
func (l *testLab) bmcWrites() map[string]int {
	m := map[string]int{}
	for n, s := range l.bmcs.Sims {
		m[n] = s.Stats().Writes
	}
	return m
}

// content is the mirror stage's content.json: every image it planned, with its destination.
type content struct {
	Images []struct {
		Source, Dest, Kind, Digest string
		Size                       int64
	} `json:"images"`
}

func (l *testLab) content(t *testing.T) content {
	t.Helper()
	var c content
	b, err := os.ReadFile(filepath.Join(l.workDir(), "content.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// plannedManifests is the set "repo@digest" content.json promises, repo without the host.
func (c content) plannedManifests() []string {
	var out []string
	for _, im := range c.Images {
		repo := im.Dest
		if i := strings.IndexAny(repo, "@"); i >= 0 {
			repo = repo[:i]
		} else if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
			repo = repo[:i]
		}
		if _, rest, ok := strings.Cut(repo, "/"); ok {
			repo = rest
		}
		out = append(out, repo+"@"+im.Digest)
	}
	sort.Strings(out)
	return dedup(out)
}

// storedManifests is the set "repo@digest" of every manifest revision in the destination
// registry's storage (distribution's filesystem layout).
func (l *testLab) storedManifests(t *testing.T) []string {
	t.Helper()
	root := filepath.Join(l.reg.Storage(), "docker", "registry", "v2", "repositories")
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() || filepath.Base(filepath.Dir(p)) != "sha256" || !strings.Contains(p, "/_manifests/revisions/") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		repo := rel[:strings.Index(rel, "/_manifests/")]
		out = append(out, repo+"@sha256:"+d.Name())
		return filepath.SkipDir
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func dedup(ss []string) []string {
	var out []string
	for i, s := range ss {
		if i == 0 || s != ss[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// editSite rewrites the lab's profile (JSON under a comment header) through fn.
func (l *testLab) editSite(t *testing.T, fn func(m map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(l.SiteFile)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.IndexByte(b, '{')
	var m map[string]any
	if err := json.Unmarshal(b[i:], &m); err != nil {
		t.Fatal(err)
	}
	fn(m)
	nb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.SiteFile, append(b[:i:i], nb...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// node returns the profile map of node name.
func node(m map[string]any, name string) map[string]any {
	for _, n := range m["nodes"].([]any) {
		if nm := n.(map[string]any); nm["name"] == name {
			return nm
		}
	}
	return nil
}

// resultData is the data of the result line that ends every command's -o json output (stdout:
// JSON lines, the result last).
func resultData(t *testing.T, out string) json.RawMessage {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var res struct {
		Kind string          `json:"kind"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil || res.Kind != "result" {
		t.Fatalf("the last line of stdout is not a result (%v):\n%s", err, out)
	}
	return res.Data
}

// logArgo quotes the end of each Argo CD process's log of a failed test: what Argo CD saw is
// gone with the test's directory otherwise.
func logArgo(t *testing.T, dir string) {
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, f := range logs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		t.Logf("the end of %s:\n%s", filepath.Base(f), tail(string(b), 40))
	}
}
