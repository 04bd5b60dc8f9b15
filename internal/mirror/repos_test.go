package mirror

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/regclient/regclient/types/ref"
)

// blobHeads counts the HEAD requests for blobs a registry gets.
type blobHeads struct{ n atomic.Int64 }

func (b *blobHeads) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead && strings.Contains(r.URL.Path, "/blobs/sha256:") {
			b.n.Add(1)
		}
		h.ServeHTTP(w, r)
	})
}

// Into a destination that knows none of the repositories, blobs are uploaded without a HEAD each,
// every repository written to is in the log, and a second run (repositories known now) checks
// blobs again; everything verifies.
func TestCopyFreshRepositoriesSkipBlobHeads(t *testing.T) {
	heads := &blobHeads{}
	e := newEnvWrapped(t, nil, heads.wrap)
	refs, err := e.b.Sample(ctx(t), e.src.Host, 64)
	if err != nil {
		t.Fatal(err)
	}
	images, _ := Images(refs, KindAdditional, "", e.dst.Host, "")
	o := e.opts()
	o.RepoLog = filepath.Join(t.TempDir(), "state", "repositories.log")
	res, err := Copy(ctx(t), images, o)
	if err != nil {
		t.Fatal(err)
	}
	if n := heads.n.Load(); n != 0 {
		t.Errorf("%d blob HEADs at a destination that knew none of the repositories, want 0", n)
	}
	verifySucceeded(t, res, o, len(images))
	b, err := os.ReadFile(o.RepoLog)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(b))
	repos := map[string]bool{}
	for _, im := range res.Images {
		r, err := ref.New(im.Dest)
		if err != nil {
			t.Fatal(err)
		}
		repos[r.Registry+"/"+r.Repository] = true
	}
	if len(got) != len(repos) {
		t.Errorf("repository log %v, want each of the %d destination repositories once: %v", got, len(repos), repos)
	}
	for _, r := range got {
		if !repos[r] {
			t.Errorf("repository log names %s, not a destination repository of this run", r)
		}
	}

	// a tag moved at the source: the second run copies it into a repository the registry knows
	more, err := e.b.Sample(ctx(t), e.src.Host, 65)
	if err != nil {
		t.Fatal(err)
	}
	images2, _ := Images(more, KindAdditional, "", e.dst.Host, "")
	heads.n.Store(0)
	res2, err := Copy(ctx(t), images2, o)
	if err != nil {
		t.Fatal(err)
	}
	if heads.n.Load() == 0 {
		t.Errorf("no blob HEAD in repositories the destination knows; want existence checks there")
	}
	verifySucceeded(t, res2, o, len(images2))
}

// A run killed before its first manifest leaves blobs in repositories the registry still calls
// unknown. The repository log sends the next run back to checking them: the blob already there
// is not fetched from the source again. Without the log line it would be (the control).
func TestRepoLogGuardsBlobsOfAKilledRun(t *testing.T) {
	for _, logged := range []bool{true, false} {
		t.Run(map[bool]string{true: "logged", false: "control"}[logged], func(t *testing.T) {
			dg := &digestGets{gets: [2]map[string]int{{}, {}}}
			e := newEnv(t, dg.wrap)
			refs, err := e.b.Sample(ctx(t), e.src.Host, 16)
			if err != nil {
				t.Fatal(err)
			}
			images, _ := Images(refs[:1], KindAdditional, "", e.dst.Host, "")
			o := e.opts()
			o.RepoLog = filepath.Join(t.TempDir(), "repositories.log")

			// what the killed run did: one layer committed into the image's repository, nothing else
			rc, err := newClient(o, e.src.Host)
			if err != nil {
				t.Fatal(err)
			}
			ps := resolveWithSignatures(ctx(t), rc, images, o, false)
			if len(ps) == 0 || ps[0].err != nil || len(ps[0].blobs) == 0 {
				t.Fatalf("resolve: %+v", ps)
			}
			p := ps[0]
			layer := p.blobs[len(p.blobs)-1]
			rdr, err := rc.BlobGet(ctx(t), p.src.SetDigest(""), layer)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rc.BlobPut(ctx(t), p.dst.SetDigest(""), layer, rdr); err != nil {
				t.Fatal(err)
			}
			rdr.Close()
			if logged {
				if err := os.WriteFile(o.RepoLog, []byte(p.dst.Registry+"/"+p.dst.Repository+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			dg.mu.Lock()
			dg.phase = 1
			dg.mu.Unlock()

			res, err := Copy(ctx(t), images, o)
			if err != nil {
				t.Fatal(err)
			}
			verifySucceeded(t, res, o, 1)
			dg.mu.Lock()
			again := dg.gets[1][string(layer.Digest)]
			dg.mu.Unlock()
			if logged && (again != 0 || res.BlobsPresent != 1) {
				t.Errorf("layer fetched %d times again, %d blobs found present; want 0 and 1: the log names the repository", again, res.BlobsPresent)
			}
			if !logged && again != 1 {
				t.Errorf("control: layer fetched %d times, want 1 (a repository the registry does not know is uploaded to unchecked)", again)
			}
		})
	}
}
