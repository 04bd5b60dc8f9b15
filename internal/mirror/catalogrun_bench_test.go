package mirror

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

// BenchmarkMirrorRunMemory is a whole mirror run (Load and Run: read and filter the catalog, copy
// the selected bundle and related images, build and push the filtered catalog, write the outputs)
// of a real-shaped catalog of CATALOG_BUNDLES bundles (default 50,000; 100 a package, see
// catalogshape_test.go) whose images exist at the source (a bundle image and two component
// images a package, referenced by every bundle of it), with no package list or with
// CATALOG_PACKAGES=a,b. It reports the run's peak RSS (VmHWM, reset just before); the in-process
// source and destination registries serve from the same process, so their memory counts too.
//
//	go test -run '^$' -bench BenchmarkMirrorRunMemory -benchtime 1x ./internal/mirror
func BenchmarkMirrorRunMemory(b *testing.B) {
	n := 50000
	if v, err := strconv.Atoi(os.Getenv("CATALOG_BUNDLES")); err == nil && v > 0 {
		n = v
	}
	e := newEnvB(b)
	pkgs := (n + 99) / 100
	refs := make([][]string, pkgs)
	for p := range refs {
		pkg := fmt.Sprintf("operator-%03d", p)
		var r []string
		for _, repo := range []string{pkg + "-bundle", pkg + "-component-1", pkg + "-component-2"} {
			d, err := e.b.Image(b.Context(), e.src.Host+"/ops/"+repo, "", mirrortest.ImageSpec{Layers: []mirrortest.Blob{e.b.Layer(256)}})
			if err != nil {
				b.Fatal(err)
			}
			r = append(r, e.src.Host+"/ops/"+repo+"@"+d.Digest.String())
		}
		refs[p] = append(r, r[1], r[2]) // four related images, two of them named twice
	}
	image, raw := pushBigCatalog(b, e.src.Host, n, func(p int) []string { return refs[p] })
	doc := "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  operators:\n  - catalog: " + image + "\n"
	if v := os.Getenv("CATALOG_PACKAGES"); v != "" {
		doc += "    packages:\n"
		for _, p := range strings.Split(v, ",") {
			doc += "    - name: " + p + "\n"
		}
	}
	iscPath := filepath.Join(b.TempDir(), "isc.yaml")
	if err := os.WriteFile(iscPath, []byte(doc), 0o644); err != nil {
		b.Fatal(err)
	}
	isc, err := LoadISC(iscPath)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var peak, floor int64
	images := 0
	for b.Loop() {
		runtime.GC()
		debug.FreeOSMemory()
		if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
			b.Skipf("cannot reset the peak RSS: %v", err)
		}
		floor = max(floor, vmHWM(b))
		o := e.opts()
		o.Dest.Namespace = "mirror"
		l, err := Load(b.Context(), Job{ISC: isc, OutDir: b.TempDir()}, &o)
		if err != nil {
			b.Fatal(err)
		}
		rep, err := l.Run(b.Context(), o)
		if err != nil {
			b.Fatal(err)
		}
		images = len(rep.Content.Images)
		peak = max(peak, vmHWM(b))
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
	b.ReportMetric(float64(floor)/(1<<20), "before-RSS-MB")
	b.ReportMetric(float64(raw)/(1<<20), "catalog-MB")
	b.ReportMetric(float64(n), "bundles")
	b.ReportMetric(float64(images), "images")
}

// BenchmarkOPMRenderMemory is the yardstick: the real opm (OPM, or opm on PATH) renders the same
// generated catalog (CATALOG_BUNDLES, written as files) to JSON, output discarded; it reports
// opm's peak RSS (the child's maxrss).
//
//	OPM=/var/cache/bootstrap/opm go test -run '^$' -bench BenchmarkOPMRenderMemory -benchtime 1x ./internal/mirror
func BenchmarkOPMRenderMemory(b *testing.B) {
	opm := mirrortest.OPM()
	if opm == "" {
		b.Fatal("no opm: set OPM (scripts/opm.sh builds it)")
	}
	n := 50000
	if v, err := strconv.Atoi(os.Getenv("CATALOG_BUNDLES")); err == nil && v > 0 {
		n = v
	}
	dir := filepath.Join(b.TempDir(), "configs")
	raw := writeBigFBC(n, nil, func(name string, data []byte) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	})
	b.ResetTimer()
	var peak int64
	for b.Loop() {
		cmd := exec.CommandContext(b.Context(), opm, "render", dir, "-o", "json")
		var stderr strings.Builder
		cmd.Stdout, cmd.Stderr = io.Discard, &stderr
		if err := cmd.Run(); err != nil {
			b.Fatalf("opm render: %v\n%s", err, stderr.String())
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = max(peak, ru.Maxrss<<10)
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "opm-peak-RSS-MB")
	b.ReportMetric(float64(raw)/(1<<20), "catalog-MB")
	b.ReportMetric(float64(n), "bundles")
}
