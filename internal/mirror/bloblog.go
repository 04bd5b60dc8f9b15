package mirror

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/opencontainers/go-digest"
)

// blobLog is Options.BlobLog: an append-only record of the blobs the destination confirmed, one
// line "registry/repository sha256:hex" each, so that a run killed late resumes at the cost of
// what is missing instead of one HEAD per blob of the whole mirror (manifests, and so the
// journal, complete only as each image's last blob lands; the largest-first queue spreads that
// over the whole run).
//
// Why skipping a logged blob is sound: a line is written only after the destination confirmed the
// blob in that repository (a HEAD answered 200, a PUT or a mount succeeded), and a registry keeps
// a blob it confirmed: nothing in a mirror run deletes blobs, and a pushed manifest's blobs are
// checked by the registry again (an image whose blob vanished fails its manifest push, loudly).
// Lines are buffered and appended with one write(2) then fsync'd, in batches (every
// blobLogFlushBytes or blobLogInterval, and at the end of the run): a kill loses at most the last
// batch, whose blobs the next run checks with HEAD as before. A line torn by a kill (no newline,
// or not "repository digest") is ignored, and a newline is written before the first new line so
// the torn one never swallows it. Wiping or garbage-collecting the destination makes the log
// wrong: delete it with the destination's content.
type blobLog struct {
	known map[string]bool // digest|registry/repository from earlier runs and this one

	mu    sync.Mutex
	buf   []byte
	f     *os.File
	stop  chan struct{}
	done  chan struct{}
	werr  error // the first write error; later lines are dropped (the log is an optimisation)
	flush sync.Mutex
}

const (
	blobLogFlushBytes = 64 << 10
	blobLogInterval   = time.Second
)

func blobKey(d digest.Digest, repo string) string { return string(d) + "|" + repo }

// openBlobLog reads path (missing: empty) and opens it for appending.
func openBlobLog(path string) (*blobLog, error) {
	l := &blobLog{known: map[string]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("blob log: %w (make it readable, or delete it: the next run then checks every blob with HEAD)", err)
	}
	l.parse(b)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("blob log: %w (the work dir must be writable)", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("blob log: %w (the work dir must be writable)", err)
	}
	l.f = f
	if len(b) > 0 && b[len(b)-1] != '\n' {
		l.buf = append(l.buf, '\n') // end the torn line
	}
	go l.loop()
	return l, nil
}

// parse takes every complete, well-formed line of b.
func (l *blobLog) parse(b []byte) {
	r := bufio.NewReader(bytes.NewReader(b))
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF {
			return // a last line without its newline is torn
		}
		repo, d, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		if !ok || repo == "" || strings.ContainsAny(repo, " \t") {
			continue
		}
		if dg, err := digest.Parse(d); err == nil {
			l.known[blobKey(dg, repo)] = true
		}
	}
}

func (l *blobLog) has(d digest.Digest, repo string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.known[blobKey(d, repo)]
}

// add records a blob the destination confirmed in repo.
func (l *blobLog) add(d digest.Digest, repo string) {
	k := blobKey(d, repo)
	l.mu.Lock()
	if l.known[k] {
		l.mu.Unlock()
		return
	}
	l.known[k] = true
	l.buf = append(l.buf, repo+" "+string(d)+"\n"...)
	full := len(l.buf) >= blobLogFlushBytes
	l.mu.Unlock()
	if full {
		l.sync()
	}
}

// sync appends the buffered lines with one write and fsyncs them.
func (l *blobLog) sync() {
	l.flush.Lock()
	defer l.flush.Unlock()
	l.mu.Lock()
	b := l.buf
	l.buf = nil
	failed := l.werr != nil
	l.mu.Unlock()
	if len(b) == 0 || failed {
		return
	}
	_, err := l.f.Write(b)
	if err == nil {
		err = l.f.Sync()
	}
	if err != nil {
		l.mu.Lock()
		l.werr = err
		l.mu.Unlock()
	}
}

func (l *blobLog) loop() {
	defer close(l.done)
	tk := time.NewTicker(blobLogInterval)
	defer tk.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-tk.C:
			l.sync()
		}
	}
}

// close writes what is buffered and closes the file.
func (l *blobLog) close() {
	close(l.stop)
	<-l.done
	l.sync()
	_ = l.f.Close()
}
