package mirror

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

// headCounter records the blob HEAD requests a registry gets, by "repository digest".
type headCounter struct {
	mu    sync.Mutex
	heads map[string]int
}

func (c *headCounter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := blobPath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodHead {
			repo := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v2/"), "/blobs/"+m[1])
			c.mu.Lock()
			c.heads[repo+" "+m[1]]++
			c.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

// TestResumeHeadsOnlyBlobsNotInTheLog kills a copy in a child process once its blob log holds
// lines, then runs it again: the resumed run sends a HEAD to the destination only for blobs the
// log does not name, and completes with everything verified.
func TestResumeHeadsOnlyBlobsNotInTheLog(t *testing.T) {
	f := &mirrortest.Faults{BytesPerSec: 256 << 10} // paced: the kill lands mid-run, after a flush
	f.Off.Store(true)
	hc := &headCounter{heads: map[string]int{}}
	e := newEnvWrapped(t, f.Wrap, hc.wrap)
	refs, err := e.b.Sample(ctx(t), e.src.Host, 256)
	if err != nil {
		t.Fatal(err)
	}
	f.Off.Store(false)
	images, _ := Images(refs, KindAdditional, "", e.dst.Host, "")
	dir := t.TempDir()
	job := killJob{Images: images}
	job.Opts.Src, job.Opts.Dst, job.Opts.CA, job.Opts.Auth = e.src.Host, e.dst.Host, e.dst.CAFile, e.dst.AuthFile
	job.Opts.BlobLog = filepath.Join(dir, "blobs.log") // no repository log: every blob not logged is HEADed
	jf := filepath.Join(dir, "job.json")
	b, _ := json.Marshal(job)
	if err := os.WriteFile(jf, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelper$")
	cmd.Env = append(os.Environ(), "MIRROR_KILL_JOB="+jf)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if st, err := os.Stat(job.Opts.BlobLog); err == nil && st.Size() > 0 {
			break
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	logged, err := os.ReadFile(job.Opts.BlobLog)
	if err != nil || len(logged) == 0 {
		t.Fatalf("blob log after the kill: %v, %d bytes", err, len(logged))
	}
	inLog := map[string]bool{}
	for _, l := range strings.Split(string(logged), "\n") {
		if repo, d, ok := strings.Cut(l, " "); ok {
			_, repo, _ = strings.Cut(repo, "/") // the registry host
			inLog[repo+" "+d] = true
		}
	}
	hc.mu.Lock()
	hc.heads = map[string]int{}
	hc.mu.Unlock()

	o := e.opts()
	o.BlobLog = job.Opts.BlobLog
	res, err := Copy(ctx(t), images, o)
	if err != nil {
		t.Fatalf("run after kill: %v", err)
	}
	hc.mu.Lock()
	heads := hc.heads // before Verify, which checks every blob
	hc.heads = map[string]int{}
	hc.mu.Unlock()
	f.Off.Store(true)
	vr, err := Verify(ctx(t), Content{Images: res.Images}, o)
	if err != nil || len(vr.Missing) != 0 {
		t.Fatalf("verify after resume: %v %+v", err, vr)
	}
	headed := 0
	for d := range heads {
		if inLog[d] {
			t.Errorf("blob %s is in the log and was checked with HEAD again (repository digest)", d)
		}
		headed++
	}
	t.Logf("log after kill: %d blobs; resumed run: %d HEADed, %d present by log or HEAD, %d copied, %d mounted",
		len(inLog), headed, res.BlobsPresent, res.BlobsCopied, res.BlobsMounted)
	if res.BlobsCopied+res.BlobsMounted == 0 {
		t.Errorf("the kill came after the whole copy: nothing left for the resumed run to do")
	}
	if _, err := os.Stat(o.BlobLog); !os.IsNotExist(err) {
		t.Errorf("the blob log outlived the run that finished the copy (a later run would trust it): %v", err)
	}
}

// TestBlobLogKeptOnlyForAResume: a cancelled run (Ctrl-C) leaves the log for the resume; a run
// that ends uninterrupted removes it, so a destination wiped later is never trusted by it.
func TestBlobLogKeptOnlyForAResume(t *testing.T) {
	e := newEnv(t, nil)
	refs, err := e.b.Sample(ctx(t), e.src.Host, 4)
	if err != nil {
		t.Fatal(err)
	}
	images, _ := Images(refs, KindAdditional, "", e.dst.Host, "")
	o := e.opts()
	o.BlobLog = filepath.Join(t.TempDir(), "blobs.log")
	if err := os.WriteFile(o.BlobLog, []byte(e.dst.Host+"/some/repo sha256:"+strings.Repeat("0", 64)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx(t))
	cancel()
	_, _ = Copy(cancelled, images, o)
	if _, err := os.Stat(o.BlobLog); err != nil {
		t.Fatalf("a cancelled run removed the blob log its resume needs: %v", err)
	}
	if _, err := Copy(ctx(t), images, o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(o.BlobLog); !os.IsNotExist(err) {
		t.Errorf("the blob log outlived a finished run: %v", err)
	}
}

// TestBlobLogIgnoresATornLine reads a log whose last line a kill cut short: the complete lines
// count, the torn one does not, and the next line appended starts on a line of its own.
func TestBlobLogIgnoresATornLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "blobs.log")
	d1 := "sha256:" + strings.Repeat("a", 64)
	d2 := "sha256:" + strings.Repeat("b", 64)
	if err := os.WriteFile(p, []byte("reg/ns/a "+d1+"\nreg/ns/a "+d2[:30]), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := openBlobLog(p)
	if err != nil {
		t.Fatal(err)
	}
	if !l.has(mustDigest(t, d1), "reg/ns/a") || l.has(mustDigest(t, d2), "reg/ns/a") || l.has(mustDigest(t, d1), "reg/ns/b") {
		t.Fatalf("known after reading: %v", l.known)
	}
	l.add(mustDigest(t, d2), "reg/ns/a")
	l.close()
	l, err = openBlobLog(p)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	if !l.has(mustDigest(t, d2), "reg/ns/a") || len(l.known) != 2 {
		t.Fatalf("known after appending to a torn log: %v", l.known)
	}
}

func mustDigest(t *testing.T, s string) digest.Digest {
	t.Helper()
	d, err := digest.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
