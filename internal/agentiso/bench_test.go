package agentiso

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso/agentisotest"
)

// benchISOSize is the size of the base ISO in the benchmarks: an agent ISO is about 1.2 GB.
const benchISOSize = 1200 << 20

// bigISO builds a live ISO and extends it (sparsely) to benchISOSize: the embed areas sit near
// the start as in a real agent ISO, the rest stands for the rootfs.
func bigISO(b *testing.B) string {
	b.Helper()
	p := buildISO(b, agentisotest.LiveISO{Ignition: []byte(agentIgnition)})
	if err := os.Truncate(p, benchISOSize); err != nil {
		b.Fatal(err)
	}
	return p
}

func benchNodes(n int) map[string]Customization {
	out := map[string]Customization{}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("xe7740-%02d", i)
		out[name] = Customization{
			KernelArgs: []string{"console=ttyS1,115200n8", fmt.Sprintf("ip=10.40.10.%d::10.40.10.1:255.255.255.0:%s:eno8303:none", 20+i, name)},
			Ignition:   []byte(fmt.Sprintf(`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/node","contents":{"source":"data:,%s"}}]}}`, name)),
		}
	}
	return out
}

func diskBytes(path string) int64 {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0
	}
	return st.Blocks * 512
}

// BenchmarkPrepare64Nodes: our way. One iteration prepares 64 per-node views.
func BenchmarkPrepare64Nodes(b *testing.B) {
	iso := bigISO(b)
	nodes := benchNodes(64)
	dir := filepath.Dir(iso)
	before := dirDisk(dir)
	var patch int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, err := Prepare(PrepareOptions{BaseISO: iso, Nodes: nodes})
		if err != nil {
			b.Fatal(err)
		}
		patch = 0
		for _, img := range p.Nodes {
			patch += img.PatchBytes
		}
		p.Close()
	}
	b.StopTimer()
	perNode := b.Elapsed().Seconds() / float64(b.N) / 64
	b.ReportMetric(perNode*1000, "ms/node")
	b.ReportMetric(float64(dirDisk(dir)-before)/64, "disk-B/node")
	b.ReportMetric(float64(patch)/64, "mem-B/node")
}

// BenchmarkNaiveCopyEmbed: the naive way (as `coreos-installer iso customize -o`): copy the
// whole ISO and write the node's embed areas into the copy. One iteration is one node.
func BenchmarkNaiveCopyEmbed(b *testing.B) {
	iso := bigISO(b)
	nodes := benchNodes(1)
	f, err := os.Open(iso)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	l, err := ReadLayout(f, benchISOSize)
	if err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(b.TempDir(), "node.iso")
	var disk int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := naiveCopyEmbed(f, l, nodes["xe7740-00"], out); err != nil {
			b.Fatal(err)
		}
		disk = diskBytes(out)
		os.Remove(out)
	}
	b.StopTimer()
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1000, "ms/node")
	b.ReportMetric(float64(disk), "disk-B/node")
}

func naiveCopyEmbed(base *os.File, l *Layout, c Customization, out string) error {
	dst, err := os.Create(out)
	if err != nil {
		return err
	}
	defer dst.Close()
	// a plain read/write copy, as a copy of an ISO to a new file on another filesystem would be
	buf := make([]byte, 1<<20)
	if _, err := io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{io.NewSectionReader(base, 0, l.Size)}, buf); err != nil {
		return err
	}
	patches, err := l.Customize(base, c)
	if err != nil {
		return err
	}
	for _, p := range patches {
		full := make([]byte, p.Length)
		copy(full, p.Data)
		if _, err := dst.WriteAt(full, p.Offset); err != nil {
			return err
		}
	}
	return dst.Sync()
}

func dirDisk(dir string) int64 {
	var total int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			total += diskBytes(p)
		}
		return nil
	})
	return total
}

// BenchmarkServe16Readers: 16 concurrent clients each fetch one sixteenth of a node's view by
// Range over loopback HTTP; compared with `cat` of the base file to /dev/null.
func BenchmarkServe16Readers(b *testing.B) {
	iso := bigISO(b)
	p, err := Prepare(PrepareOptions{BaseISO: iso, Nodes: benchNodes(1)})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	h, _ := NewHandler(HandlerOptions{Images: p.Images()})
	srv := httptest.NewServer(h)
	defer srv.Close()
	img := p.Nodes["xe7740-00"]
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}

	catStart := time.Now()
	if out, err := exec.Command("sh", "-c", "cat "+iso+" > /dev/null").CombinedOutput(); err != nil {
		b.Fatalf("cat: %v %s", err, out)
	}
	catRate := float64(benchISOSize) / time.Since(catStart).Seconds()

	b.SetBytes(img.Size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var wg sync.WaitGroup
		chunk := img.Size / 16
		for r := int64(0); r < 16; r++ {
			lo, hi := r*chunk, (r+1)*chunk-1
			if r == 15 {
				hi = img.Size - 1
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest("GET", srv.URL+img.Path, nil)
				req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", lo, hi))
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if n != hi-lo+1 {
					b.Errorf("range %d-%d: %d bytes", lo, hi, n)
				}
			}()
		}
		wg.Wait()
	}
	b.StopTimer()
	rate := float64(img.Size) * float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(rate/1e6, "MB/s")
	b.ReportMetric(catRate/1e6, "cat-MB/s")
	b.ReportMetric(rate/catRate, "ratio-to-cat")
}
