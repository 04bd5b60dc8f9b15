package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
	"github.com/bootstrap-dev/bootstrap/internal/progress"
	"github.com/bootstrap-dev/bootstrap/internal/units"
)

// How `bootstrap mirror` draws what the mirror driver reports: progress and the disk check.

// mirrorDiskCheck is the disk preflight of a file:// run: the blobs the layout does not hold yet
// must fit on its file system, with 1 % (at least 64 MiB) to spare for manifests and the file
// system; otherwise nothing is copied and the command exits 2 like a failed preflight.
func mirrorDiskCheck(w io.Writer, dir string, need int64) error {
	need += max(need/100, 64<<20)
	r := preflight.CheckDisk(dir, need)
	fmt.Fprintf(w, "%s disk %s: %s\n", r.Status.Label(), dir, r.Message)
	if r.Status == finding.Fail {
		fmt.Fprintf(w, "  → free space there or give file:// a larger file system; nothing was copied\n")
		return &preflight.FailedError{Checks: []string{"disk " + dir}}
	}
	return nil
}

// mirrorProgress renders progress: one JSON object per snapshot, a redrawn line on a TTY, or a
// plain line at most every 2 seconds otherwise. Snapshots arrive from one goroutine at a time.
func mirrorProgress(w io.Writer, asJSON, tty bool) mirror.ProgressFunc {
	var mu sync.Mutex
	last := time.Time{}
	return func(p mirror.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if asJSON {
			_ = json.NewEncoder(w).Encode(map[string]any{"kind": "progress", "bytesDone": p.BytesDone, "bytesTotal": p.BytesTotal,
				"imagesDone": p.ImagesDone, "imagesTotal": p.ImagesTotal, "blobsDone": p.BlobsDone, "blobsTotal": p.BlobsTotal,
				"failed": p.Failed, "elapsedSeconds": p.Elapsed.Seconds()})
			return
		}
		if !tty && time.Since(last) < 2*time.Second && p.ImagesDone < p.ImagesTotal {
			return
		}
		last = time.Now()
		rate := float64(p.BytesDone) / max(p.Elapsed.Seconds(), 0.001)
		eta := progress.TimeLeftOfBoth(p.BytesDone, p.BytesTotal, rate,
			int64(p.BlobsDone), int64(p.BlobsTotal), float64(p.BlobsDone)/max(p.Elapsed.Seconds(), 0.001))
		if eta == "" {
			eta = "-"
		}
		line := fmt.Sprintf("%s / %s  %s/s  ETA %s  blobs %d/%d  images %d/%d  failed %d", units.Bytes(p.BytesDone), units.Bytes(p.BytesTotal),
			units.Bytes(int64(rate)), eta, p.BlobsDone, p.BlobsTotal, p.ImagesDone, p.ImagesTotal, p.Failed)
		if tty {
			fmt.Fprintf(w, "\r\033[K%s", line)
			if p.ImagesDone+p.Failed >= p.ImagesTotal {
				fmt.Fprintln(w)
			}
			return
		}
		fmt.Fprintln(w, line)
	}
}

func mirrorIsTTY(w io.Writer) bool {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok { // the secret scrubber
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
