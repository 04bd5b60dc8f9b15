package mirror

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

// digestGets records which blobs a registry served, per phase.
type digestGets struct {
	mu    sync.Mutex
	phase int
	gets  [2]map[string]int
}

var blobPath = regexp.MustCompile(`/blobs/(sha256:[0-9a-f]{64})$`)

func (d *digestGets) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := blobPath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodGet {
			d.mu.Lock()
			d.gets[d.phase][m[1]]++
			d.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

type killJob struct {
	Images []Image
	Opts   struct{ Src, Dst, CA, Auth, RepoLog, BlobLog string }
}

// TestCopySurvivesSIGKILL kills a copy running in a child process at random points (three seeds),
// then runs it again: the second run completes, everything verifies, and the only blobs fetched
// twice are those that were in flight at the kill: fetched, but not committed at the destination.
// At most 2 × Parallel are: Parallel streaming plus at most Parallel lent out to their commit.
func TestCopySurvivesSIGKILL(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run("seed"+string(rune('0'+seed)), func(t *testing.T) {
			dg := &digestGets{gets: [2]map[string]int{{}, {}}}
			f := &mirrortest.Faults{BytesPerSec: 2 << 20} // pace every blob stream at 2 MiB/s
			f.Off.Store(true)
			e := newEnv(t, func(h http.Handler) http.Handler { return dg.wrap(f.Wrap(h)) })
			refs, err := e.b.Sample(ctx(t), e.src.Host, 256)
			if err != nil {
				t.Fatal(err)
			}
			f.Off.Store(false)
			images, _ := Images(refs, KindAdditional, "", e.dst.Host, "")
			job := killJob{Images: images}
			job.Opts.Src, job.Opts.Dst, job.Opts.CA, job.Opts.Auth = e.src.Host, e.dst.Host, e.dst.CAFile, e.dst.AuthFile
			job.Opts.RepoLog = filepath.Join(t.TempDir(), "repositories.log") // no HEADs into new repositories
			jf := filepath.Join(t.TempDir(), "job.json")
			b, _ := json.Marshal(job)
			if err := os.WriteFile(jf, b, 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelper$")
			cmd.Env = append(os.Environ(), "MIRROR_KILL_JOB="+jf)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// kill at a random point after the child's first blob fetch
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				dg.mu.Lock()
				n := len(dg.gets[0])
				dg.mu.Unlock()
				if n > 0 {
					break
				}
			}
			rng := rand.New(rand.NewPCG(seed, 42)) //#nosec G404 -- test
			time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
			_ = cmd.Process.Kill() // SIGKILL: no cleanup of any kind
			_ = cmd.Wait()
			// in flight at the kill: fetched, and not in the destination's blob store
			inFlight := map[string]bool{}
			dg.mu.Lock()
			for d := range dg.gets[0] {
				hex := strings.TrimPrefix(d, "sha256:")
				if _, err := os.Stat(filepath.Join(e.dst.Storage, "docker/registry/v2/blobs/sha256", hex[:2], hex, "data")); err != nil {
					inFlight[d] = true
				}
			}
			dg.mu.Unlock()

			dg.mu.Lock()
			dg.phase = 1
			dg.mu.Unlock()
			o := e.opts()
			o.RepoLog = job.Opts.RepoLog
			if _, err := Copy(ctx(t), images, o); err != nil {
				t.Fatalf("run after kill: %v", err)
			}
			f.Off.Store(true)
			res, err := Copy(ctx(t), images, o)
			if err != nil {
				t.Fatal(err)
			}
			vr, err := Verify(ctx(t), Content{Images: res.Images}, o)
			if err != nil || len(vr.Missing) != 0 {
				t.Fatalf("verify after resume: %v %+v", err, vr)
			}
			dg.mu.Lock()
			defer dg.mu.Unlock()
			again := 0
			for d := range dg.gets[1] {
				if dg.gets[0][d] > 0 {
					again++
				}
			}
			t.Logf("before kill: %d blobs fetched, %d of them in flight; after: %d fetched, %d of them again", len(dg.gets[0]), len(inFlight), len(dg.gets[1]), again)
			if len(inFlight) > 2*o.Parallel {
				t.Errorf("%d blobs in flight at the kill, want at most 2 × %d", len(inFlight), o.Parallel)
			}
			for d := range dg.gets[1] {
				if dg.gets[0][d] > 0 && !inFlight[d] {
					t.Errorf("blob %s fetched again although the destination had committed it before the kill", d)
				}
			}
			for d, n := range dg.gets[1] {
				if n > 1 {
					t.Errorf("blob %s fetched %d times in the resumed run", d, n)
				}
			}
		})
	}
}

// TestKillHelper is the child process of TestCopySurvivesSIGKILL; without its job it does nothing.
func TestKillHelper(t *testing.T) {
	jf := os.Getenv("MIRROR_KILL_JOB")
	if jf == "" {
		return
	}
	b, err := os.ReadFile(jf)
	if err != nil {
		t.Fatal(err)
	}
	var job killJob
	if err := json.Unmarshal(b, &job); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions(Dest{Host: job.Opts.Dst, CAFile: job.Opts.CA, AuthFile: job.Opts.Auth})
	o.Source = Endpoint{Host: job.Opts.Src, Insecure: true}
	o.Parallel = 4
	o.RepoLog, o.BlobLog = job.Opts.RepoLog, job.Opts.BlobLog
	_, _ = Copy(context.Background(), job.Images, o)
}
