package gather

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/filehash"
)

// Source is one thing to collect. Name is its path inside the tarball ("nodes/master-0/kubelet.log").
type Source interface {
	Name() string
	Collect(ctx context.Context, w io.Writer) error
}

// Entry is one source's line in the index.
type Entry struct {
	Name    string  `json:"name"`
	Bytes   int64   `json:"bytes"`
	SHA256  string  `json:"sha256,omitempty"`
	Seconds float64 `json:"seconds"`
	// Error is why the source failed; what it wrote before failing is kept.
	Error string `json:"error,omitempty"`
}

// Index is index.json at the top of the tarball.
type Index struct {
	Created time.Time `json:"created"`
	Entries []Entry   `json:"entries"`
	Failed  int       `json:"failed"`
}

// Options tune a gather.
type Options struct {
	// Parallel sources at once (default 4); sources of one node share its connection.
	Parallel int
	// SourceTimeout bounds each source (default 5 minutes).
	SourceTimeout time.Duration
	// Progress is told each finished entry; nil means no reports.
	Progress func(Entry)
	// Scrub, when set, rewrites every byte that goes into the tarball (each source's content,
	// line by line, and the index's error texts) to remove secrets: a BMC that echoes the
	// credentials in an error, a node log that quotes them. Nil keeps everything.
	Scrub func([]byte) []byte
}

// Gather collects every source into the gzip tarball at out, with index.json (and a readable
// index.txt) first. Per-source failures are recorded in the index, never returned; the error is
// for the tarball itself.
func Gather(ctx context.Context, out string, sources []Source, o Options) (Index, error) {
	if o.Parallel <= 0 {
		o.Parallel = 4
	}
	if o.SourceTimeout <= 0 {
		o.SourceTimeout = 5 * time.Minute
	}
	if o.Scrub == nil {
		o.Scrub = func(b []byte) []byte { return b }
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), ".gather-")
	if err != nil {
		return Index{}, fmt.Errorf("gather: %w", err)
	}
	defer os.RemoveAll(tmp)

	idx := Index{Created: time.Now().UTC(), Entries: make([]Entry, len(sources))}
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	for i, s := range sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			e := collect(ctx, s, filepath.Join(tmp, fmt.Sprintf("%05d", i)), o.SourceTimeout, o.Scrub)
			e.Error = string(o.Scrub([]byte(e.Error)))
			idx.Entries[i] = e
			if o.Progress != nil {
				o.Progress(e)
			}
		}()
	}
	wg.Wait()
	for _, e := range idx.Entries {
		if e.Error != "" {
			idx.Failed++
		}
	}
	if err := writeTar(out, tmp, idx); err != nil {
		return idx, err
	}
	return idx, nil
}

func collect(ctx context.Context, s Source, path string, timeout time.Duration, scrub func([]byte) []byte) Entry {
	e := Entry{Name: s.Name()}
	start := time.Now()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		e.Error = err.Error()
		return e
	}
	cw := filehash.NewWriter(f)
	lw := &lineScrubber{w: cw, scrub: scrub}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	err = s.Collect(sctx, lw)
	if ferr := lw.flush(); err == nil {
		err = ferr
	}
	cancel()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	e.Bytes, e.SHA256, e.Seconds = cw.Size(), cw.Sum(), time.Since(start).Seconds()
	if err != nil {
		e.Error = err.Error()
	}
	return e
}

// lineScrubber hands whole lines to scrub. A line longer than maxLine (a BMC's one-line JSON) is
// written in pieces cut where no secret straddles the cut: a piece is written only when its
// scrubbed form is the start of the scrubbed rest (a secret across the cut would be redacted in
// the latter and not in the former), else the cut moves back.
type lineScrubber struct {
	w     io.Writer
	scrub func([]byte) []byte
	buf   []byte
}

const maxLine = 64 << 10

func (l *lineScrubber) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 && len(l.buf) < 2*maxLine {
			return len(p), nil
		}
		n := i + 1
		var out []byte
		if i < 0 {
			full := l.scrub(l.buf[:len(l.buf):len(l.buf)])
			for n = maxLine; n > 0; n -= 256 {
				if out = l.scrub(l.buf[:n:n]); bytes.HasPrefix(full, out) {
					break
				}
			}
			if n <= 0 {
				n, out = len(l.buf), full
			}
		} else {
			out = l.scrub(l.buf[:n:n])
		}
		if _, err := l.w.Write(out); err != nil {
			return 0, err
		}
		l.buf = l.buf[n:]
	}
}

func (l *lineScrubber) flush() error {
	if len(l.buf) == 0 {
		return nil
	}
	_, err := l.w.Write(l.scrub(l.buf))
	l.buf = nil
	return err
}

// writeTar writes the tarball beside out and renames it into place; the temporary name is
// created afresh (whatever is there, a planted link included, is removed, never followed).
func writeTar(out, tmp string, idx Index) error {
	part := out + ".part"
	if err := os.Remove(part); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("gather: %w", err)
	}
	f, err := os.OpenFile(part, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("gather: %w", err)
	}
	defer os.Remove(part)
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	js, _ := json.MarshalIndent(idx, "", "  ")
	add := func(name string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(data)), ModTime: idx.Created, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	err = add("index.json", append(js, '\n'))
	if err == nil {
		err = add("index.txt", []byte(indexText(idx)))
	}
	for i, e := range idx.Entries {
		if err != nil {
			break
		}
		err = addFile(tw, e.Name, filepath.Join(tmp, fmt.Sprintf("%05d", i)), idx.Created)
	}
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("gather: write %s: %w", out, err)
	}
	if err := os.Rename(part, out); err != nil {
		return fmt.Errorf("gather: %w", err)
	}
	return nil
}

func addFile(tw *tar.Writer, name, path string, mod time.Time) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: st.Size(), ModTime: mod, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}

// indexText is the index for people: one line a source, failures first.
func indexText(idx Index) string {
	es := append([]Entry(nil), idx.Entries...)
	sort.SliceStable(es, func(a, b int) bool { return es[a].Error != "" && es[b].Error == "" })
	var b strings.Builder
	fmt.Fprintf(&b, "bootstrap gather %s: %d sources, %d failed\n\n", idx.Created.Format(time.RFC3339), len(es), idx.Failed)
	for _, e := range es {
		status := "ok"
		if e.Error != "" {
			status = "FAILED: " + e.Error
		}
		fmt.Fprintf(&b, "%-50s %10d bytes %6.1fs  %s\n", e.Name, e.Bytes, e.Seconds, status)
	}
	return b.String()
}
