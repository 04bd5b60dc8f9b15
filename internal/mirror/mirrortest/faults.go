package mirrortest

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Faults injects the failures field engineers meet between a mirror tool and a registry. Wrap a
// registry's handler with it (RegistryOptions.Wrap); it is safe for concurrent use.
type Faults struct {
	// Every5xx answers every Nth request with 503 (0: never).
	Every5xx int64
	// ResetEvery cuts every Nth blob GET after half of its body by dropping the connection (0: never).
	ResetEvery int64
	// MaxInARow, when set, bounds the 5xx answers and resets one request (method + path) gets
	// in a row: the next try of that request passes. The counters above are global, so without
	// it a retried request can keep landing on the Nth slot (the retries of parallel workers
	// fall into step) and a client that retries MaxInARow times must still get through.
	MaxInARow int
	// Delay is added before every response (a slow link).
	Delay time.Duration
	// FailPath: requests whose URL path contains it always get 500 (a permanently broken image).
	FailPath string
	// BytesPerSec, when set, paces blob bodies (so a test can kill a copy in the middle).
	BytesPerSec int64
	// BeforeFail, when set, is called before a FailPath request is answered, with how many
	// requests for the same method and path came before it (0 for the first): a test can hold
	// a retry back until something else happened.
	BeforeFail func(r *http.Request, earlier int)

	// Off passes requests through untouched (while a test seeds content, say).
	Off atomic.Bool

	n, blobs          atomic.Int64
	mu                sync.Mutex
	failed            map[string]int // method + path -> FailPath requests answered
	inARow            map[string]int // method + path -> injected faults since it last passed
	Injected5xx       atomic.Int64
	InjectedResets    atomic.Int64
	InjectedPermanent atomic.Int64
}

// Failed returns how many FailPath requests were answered, by "METHOD path".
func (f *Faults) Failed() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]int, len(f.failed))
	for k, v := range f.failed {
		out[k] = v
	}
	return out
}

// Wrap returns h behind the fault injector.
func (f *Faults) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.Off.Load() {
			h.ServeHTTP(w, r)
			return
		}
		if f.Delay > 0 {
			time.Sleep(f.Delay)
		}
		if f.FailPath != "" && strings.Contains(r.URL.Path, f.FailPath) {
			k := r.Method + " " + r.URL.Path
			f.mu.Lock()
			if f.failed == nil {
				f.failed = map[string]int{}
			}
			earlier := f.failed[k]
			f.failed[k]++
			f.mu.Unlock()
			if f.BeforeFail != nil {
				f.BeforeFail(r, earlier)
			}
			f.InjectedPermanent.Add(1)
			http.Error(w, "injected permanent failure", http.StatusInternalServerError)
			return
		}
		key := r.Method + " " + r.URL.Path
		if f.Every5xx > 0 && f.n.Add(1)%f.Every5xx == 0 && f.inject(key) {
			f.Injected5xx.Add(1)
			http.Error(w, "injected 503", http.StatusServiceUnavailable)
			return
		}
		isBlobGet := r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/sha256:")
		cut := false
		if isBlobGet && (f.ResetEvery > 0 || f.BytesPerSec > 0) {
			fw := &faultWriter{ResponseWriter: w, f: f}
			if f.ResetEvery > 0 && f.blobs.Add(1)%f.ResetEvery == 0 && f.inject(key) {
				fw.cut, cut = true, true
			}
			w = fw
		}
		if !cut {
			f.passed(key)
		}
		h.ServeHTTP(w, r)
	})
}

// inject says whether a fault may be injected into the request key (MaxInARow) and counts it.
func (f *Faults) inject(key string) bool {
	if f.MaxInARow <= 0 {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.inARow == nil {
		f.inARow = map[string]int{}
	}
	if f.inARow[key] >= f.MaxInARow {
		return false
	}
	f.inARow[key]++
	return true
}

// passed records that the request key went through without an injected fault.
func (f *Faults) passed(key string) {
	if f.MaxInARow <= 0 {
		return
	}
	f.mu.Lock()
	delete(f.inARow, key)
	f.mu.Unlock()
}

// faultWriter paces a blob body and, when cut, aborts the connection halfway through it.
type faultWriter struct {
	http.ResponseWriter
	f       *Faults
	cut     bool
	limit   int64
	written int64
}

func (w *faultWriter) WriteHeader(code int) {
	if n, err := strconv.ParseInt(w.Header().Get("Content-Length"), 10, 64); err == nil {
		w.limit = n / 2
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *faultWriter) Write(p []byte) (int, error) {
	if w.cut && w.written+int64(len(p)) > w.limit {
		n, _ := w.ResponseWriter.Write(p[:max(w.limit-w.written, 0)])
		if fl, ok := w.ResponseWriter.(http.Flusher); ok {
			fl.Flush()
		}
		w.f.InjectedResets.Add(1)
		w.written += int64(n)
		panic(http.ErrAbortHandler) // net/http closes the connection: the client sees an unexpected EOF
	}
	if w.f.BytesPerSec > 0 {
		time.Sleep(time.Duration(int64(len(p)) * int64(time.Second) / w.f.BytesPerSec))
	}
	n, err := w.ResponseWriter.Write(p)
	w.written += int64(n)
	return n, err
}
