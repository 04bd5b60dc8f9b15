package mirror

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
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

// openBlobLog reads path (missing: empty) and opens it for appending. The log is the work
// dir's, but a work dir can be carried or edited: it is read as a stream through the safe opener
// (a regular file of at most fsroot.StateLog's cap, no link at its end) and appended to without
// following a link.
func openBlobLog(path string) (*blobLog, error) {
	l := &blobLog{known: map[string]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	torn, err := readStateLog(path, l.take)
	if err != nil {
		return nil, fmt.Errorf("blob log: %w (make it readable, or delete it: the next run then checks every blob with HEAD)", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("blob log: %w (the work dir must be writable)", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("blob log: %w (the work dir must be writable)", err)
	}
	l.f = f
	if torn {
		l.buf = append(l.buf, '\n') // end the torn line
	}
	go l.loop()
	return l, nil
}

// readStateLog streams the lines of a work dir log (missing: none) to take, each without its
// newline; torn is true when the last line has none (a run killed mid-write). A line longer than
// any real one is skipped, not held.
func readStateLog(path string, take func(line string)) (torn bool, err error) {
	f, err := fsroot.OpenBeneath(path, fsroot.StateLog)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(io.LimitReader(f, fsroot.StateLog.Max()), 64<<10)
	long := false
	for {
		line, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			long = true
			continue
		case err == io.EOF:
			return len(line) > 0 || long, nil
		case err != nil:
			return false, err
		}
		if !long {
			take(string(line[:len(line)-1]))
		}
		long = false
	}
}

// take records one line of the log when it is well formed.
func (l *blobLog) take(line string) {
	repo, d, ok := strings.Cut(line, " ")
	if !ok || repo == "" || strings.ContainsAny(repo, " \t") {
		return
	}
	if dg, err := digest.Parse(d); err == nil {
		l.known[blobKey(dg, repo)] = true
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
