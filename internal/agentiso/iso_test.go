package agentiso

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso/agentisotest"
)

const agentIgnition = `{"ignition":{"version":"3.2.0"},"passwd":{"users":[{"name":"core"}]}}`

func needTools(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"xorriso", "osirrox", "isoinfo", "xz", "cpio"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not installed: run scripts/install-deps.sh", tool)
		}
	}
}

func buildISO(t testing.TB, l agentisotest.LiveISO) string {
	t.Helper()
	needTools(t)
	p := filepath.Join(t.TempDir(), "agent.x86_64.iso")
	if err := l.Build(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func openLayout(t testing.TB, path string) (*os.File, *Layout) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, _ := f.Stat()
	l, err := ReadLayout(f, st.Size())
	if err != nil {
		t.Fatalf("ReadLayout: %v", err)
	}
	return f, l
}

func TestReadLayout(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		name := map[bool]string{false: "json-info", true: "legacy-headers"}[legacy]
		t.Run(name, func(t *testing.T) {
			iso := buildISO(t, agentisotest.LiveISO{Legacy: legacy, Ignition: []byte(agentIgnition)})
			_, l := openLayout(t, iso)
			ext, err := agentisotest.FileExtent(iso, "/images/ignition.img")
			if err != nil {
				t.Fatal(err)
			}
			if l.Ignition.Offset != ext[0] || l.Ignition.Length != ext[1] {
				t.Errorf("ignition area %+v, xorriso says offset %d size %d", l.Ignition, ext[0], ext[1])
			}
			if l.Kargs != agentisotest.DefaultKargs || l.DefaultKargs != agentisotest.DefaultKargs {
				t.Errorf("kargs %q default %q", l.Kargs, l.DefaultKargs)
			}
			if len(l.KargAreas) != 2 || l.KargSize != 1139 {
				t.Errorf("karg areas %+v size %d", l.KargAreas, l.KargSize)
			}
		})
	}
}

func TestReadLayoutNotLive(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hi"), 0o644)
	iso := filepath.Join(t.TempDir(), "plain.iso")
	if out, err := exec.Command("xorriso", "-as", "mkisofs", "-quiet", "-o", iso, "-R", dir).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	f, _ := os.Open(iso)
	defer f.Close()
	st, _ := f.Stat()
	if _, err := ReadLayout(f, st.Size()); !errors.Is(err, ErrNotLiveISO) {
		t.Fatalf("err = %v, want ErrNotLiveISO", err)
	}
	if _, err := ReadLayout(bytes.NewReader(make([]byte, 64<<10)), 64<<10); err == nil {
		t.Fatal("zeros accepted as an ISO")
	}
}

// materialize writes a view to a file so real tools can read it back.
func materialize(t testing.TB, v *View) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "node.iso")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, io.NewSectionReader(v, 0, v.Size())); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

func TestCustomizeReadBack(t *testing.T) {
	fragment := []byte(`{"ignition": {"version": "3.2.0"}, "storage": {"files": [{"path": "/etc/node-name", "contents": {"source": "data:,xe7740-1"}}]}}`)
	kargs := []string{"console=ttyS1,115200n8", "ip=10.40.10.21::10.40.10.1:255.255.255.0:xe7740-1:eno8303:none"}
	for _, c := range []struct {
		name   string
		legacy bool
		gzip   bool
		base   []byte
	}{{"json-info with agent ignition", false, false, []byte(agentIgnition)}, {"gzip agent ignition", false, true, []byte(agentIgnition)},
		{"legacy empty area", true, false, nil}} {
		t.Run(c.name, func(t *testing.T) {
			iso := buildISO(t, agentisotest.LiveISO{Legacy: c.legacy, Gzip: c.gzip, Ignition: c.base})
			f, l := openLayout(t, iso)
			patches, err := l.Customize(f, Customization{KernelArgs: kargs, Ignition: fragment})
			if err != nil {
				t.Fatal(err)
			}
			v, err := NewView(f, l.Size, patches)
			if err != nil {
				t.Fatal(err)
			}
			out := materialize(t, v)

			wantKargs := agentisotest.DefaultKargs + " " + strings.Join(kargs, " ")
			for _, bc := range []struct{ path, prefix string }{
				{"/EFI/redhat/grub.cfg", "linux /images/pxeboot/vmlinuz "},
				{"/isolinux/isolinux.cfg", "append initrd=/images/pxeboot/initrd.img,/images/ignition.img "},
			} {
				cfg, err := agentisotest.IsoinfoFile(out, bc.path)
				if err != nil {
					t.Fatal(err)
				}
				got, err := agentisotest.KargsIn(cfg, bc.prefix)
				if err != nil {
					t.Fatal(err)
				}
				if got != wantKargs {
					t.Errorf("%s kargs = %q, want %q", bc.path, got, wantKargs)
				}
				if !bytes.Contains(cfg, []byte("\n###")) || len(cfg) == 0 {
					t.Errorf("%s: pad lost:\n%s", bc.path, cfg)
				}
			}
			area, err := agentisotest.ExtractFile(out, "/images/ignition.img")
			if err != nil {
				t.Fatal(err)
			}
			if len(area) != 256<<10 {
				t.Errorf("ignition.img is %d bytes, want the area's 262144", len(area))
			}
			files, err := agentisotest.Initrd(area)
			if err != nil {
				t.Fatal(err)
			}
			checkIgnition(t, files["config.ign"], c.base, fragment)

			// our own reader agrees, and the view re-read is a valid live ISO
			st, _ := os.Stat(out)
			nf, _ := os.Open(out)
			defer nf.Close()
			l2, err := ReadLayout(nf, st.Size())
			if err != nil || l2.Kargs != wantKargs {
				t.Errorf("re-read kargs %q, %v", l2.Kargs, err)
			}
			// bytes outside the patches are the base's
			base, _ := os.ReadFile(iso)
			node, _ := os.ReadFile(out)
			for i := range base {
				if base[i] != node[i] && !inPatches(int64(i), patches) {
					t.Fatalf("byte %d changed outside the patches", i)
				}
			}
		})
	}
}

func inPatches(off int64, ps []Patch) bool {
	for _, p := range ps {
		if off >= p.Offset && off < p.Offset+p.Length {
			return true
		}
	}
	return false
}

func checkIgnition(t *testing.T, got, base, fragment []byte) {
	t.Helper()
	var compact bytes.Buffer
	json.Compact(&compact, fragment)
	if base == nil {
		if !bytes.Equal(got, compact.Bytes()) {
			t.Errorf("config.ign = %s, want the fragment", got)
		}
		return
	}
	var cfg struct {
		Ignition struct {
			Version string `json:"version"`
			Config  struct {
				Merge []struct {
					Source string `json:"source"`
				} `json:"merge"`
			} `json:"config"`
		} `json:"ignition"`
		Passwd map[string]any `json:"passwd"`
	}
	if err := json.Unmarshal(got, &cfg); err != nil {
		t.Fatalf("config.ign: %v: %s", err, got)
	}
	if cfg.Ignition.Version != "3.2.0" || cfg.Passwd == nil || len(cfg.Ignition.Config.Merge) != 1 {
		t.Fatalf("config.ign lost the agent config or lacks the merge: %s", got)
	}
	src := cfg.Ignition.Config.Merge[0].Source
	data, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(src, "data:text/plain;charset=utf-8;base64,"))
	if err != nil || !bytes.Equal(data, compact.Bytes()) {
		t.Errorf("merged source %q decodes to %s (%v)", src, data, err)
	}
}

func TestCustomizeErrors(t *testing.T) {
	iso := buildISO(t, agentisotest.LiveISO{Ignition: []byte(agentIgnition)})
	f, l := openLayout(t, iso)
	cases := map[string]struct {
		c    Customization
		want string
	}{
		"kargs too long":    {Customization{KernelArgs: []string{strings.Repeat("x", 1100)}}, "the ISO's areas hold 1139"},
		"karg with #":       {Customization{KernelArgs: []string{"a#b"}}, `kernel argument "a#b"`},
		"fragment not JSON": {Customization{Ignition: []byte("{")}, "not JSON"},
		"fragment spec 2":   {Customization{Ignition: []byte(`{"ignition":{"version":"2.2.0"}}`)}, "want a 3.x spec"},
		"ignition too big":  {Customization{Ignition: []byte(`{"ignition":{"version":"3.2.0"},"x":"` + randomText(400<<10) + `"}`)}, "embed area holds 262144"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := l.Customize(f, c.c)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func randomText(n int) string {
	const alpha = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = alpha[r.IntN(len(alpha))]
	}
	return string(b)
}

func TestViewReadAt(t *testing.T) {
	base := make([]byte, 100000)
	for i := range base {
		base[i] = byte(i)
	}
	patches := []Patch{{Offset: 10, Length: 20, Data: []byte("hello")}, {Offset: 50000, Length: 1000, Data: bytes.Repeat([]byte{7}, 600)}, {Offset: 99990, Length: 10, Data: []byte("0123456789")}}
	want := append([]byte(nil), base...)
	for _, p := range patches {
		clear(want[p.Offset : p.Offset+p.Length])
		copy(want[p.Offset:], p.Data)
	}
	v, err := NewView(bytes.NewReader(base), int64(len(base)), patches)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		off := r.Int64N(int64(len(base)))
		n := r.IntN(70000)
		buf := make([]byte, n)
		got, err := v.ReadAt(buf, off)
		end := min(off+int64(n), int64(len(base)))
		if got != int(end-off) || !bytes.Equal(buf[:got], want[off:end]) {
			t.Fatalf("ReadAt(%d, %d) = %d, %v: wrong bytes", off, n, got, err)
		}
		if end < off+int64(n) && !errors.Is(err, io.EOF) {
			t.Fatalf("short read without EOF")
		}
	}
	if _, err := NewView(bytes.NewReader(base), int64(len(base)), []Patch{{Offset: 0, Length: 10}, {Offset: 5, Length: 10}}); err == nil {
		t.Error("overlapping patches accepted")
	}
}
