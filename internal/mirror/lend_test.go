package mirror

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

// slowCommits holds every blob upload's final PUT for delay after its body has arrived (a
// registry syncing the blob to disk) and records how many such commits overlapped and how many
// blob GETs reached the source while an upload was unanswered.
//
// "Unanswered" is counted from the upload's POST (which the client has seen answered before it
// sends the PUT) to the moment the PUT's status is written. Counting from the PUT's arrival
// instead would race: a small body fits in the socket buffers, so the client can reach the
// body's end, lend its slot and send the next GET before the server has dispatched the PUT.
type slowCommits struct {
	delay            time.Duration
	open             atomic.Int64 // uploads opened (POST answered 202) whose PUT is not answered
	held, maxHeld    atomic.Int64
	getsDuringCommit atomic.Int64
}

func (s *slowCommits) wrapDst(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.Path, "/blobs/uploads/") {
			h.ServeHTTP(w, r)
			return
		}
		switch r.Method {
		case http.MethodPost:
			s.open.Add(1) // before the answer can reach the client
			h.ServeHTTP(&statusHook{ResponseWriter: w, onStatus: func(code int) {
				if code != http.StatusAccepted { // mounted or refused: no upload left open
					s.open.Add(-1)
				}
			}}, r)
		case http.MethodPut:
			h.ServeHTTP(&statusHook{ResponseWriter: w, onStatus: s.commit}, r)
		default:
			h.ServeHTTP(w, r)
		}
	})
}

func (s *slowCommits) wrapSrc(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/sha256:") && s.open.Load() > 0 {
			s.getsDuringCommit.Add(1)
		}
		h.ServeHTTP(w, r)
	})
}

// commit delays the PUT's answer: the registry has read the body and committed by the time it
// writes the status, so the client is waiting on the commit exactly as it would on an fsync. The
// upload stops counting as open just before its status goes out.
func (s *slowCommits) commit(int) {
	n := s.held.Add(1)
	for {
		m := s.maxHeld.Load()
		if n <= m || s.maxHeld.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(s.delay)
	s.held.Add(-1)
	s.open.Add(-1)
}

// TestWorkerLentDuringCommit: with one worker, the next blob streams while the destination holds
// the previous blob's commit, and no more than Parallel commits wait without a worker (here one
// lent commit plus the worker's own).
func TestWorkerLentDuringCommit(t *testing.T) {
	s := &slowCommits{delay: 150 * time.Millisecond}
	e := newEnvWrapped(t, s.wrapSrc, s.wrapDst)
	var layers []mirrortest.Blob
	for range 6 {
		layers = append(layers, e.b.Layer(64<<10))
	}
	repo := e.src.Host + "/ocp/lend"
	if _, err := e.b.Image(ctx(t), repo, "v1", mirrortest.ImageSpec{Layers: layers}); err != nil {
		t.Fatal(err)
	}
	s.getsDuringCommit.Store(0)
	images, _ := Images([]string{repo + ":v1"}, KindAdditional, "", e.dst.Host, "")
	o := e.opts()
	o.Parallel = 1
	res, err := Copy(ctx(t), images, o)
	if err != nil {
		t.Fatal(err)
	}
	verifySucceeded(t, res, o, 1)
	if s.getsDuringCommit.Load() == 0 {
		t.Errorf("no blob was fetched while an upload was committing: the worker waited on every commit")
	}
	if m := s.maxHeld.Load(); m > 2 {
		t.Errorf("%d commits overlapped, want at most 2 (one lent, one on the only worker)", m)
	}
}
