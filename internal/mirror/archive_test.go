package mirror

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
)

// TestArchiveParts: a disk mirror packed into parts of at most limit bytes (a blob larger than
// the limit alone in its part, none split), carried to another directory with archive.json,
// checked, extracted and pushed into a registry; a later run packs only new blobs and leaves
// finished parts alone, also after being interrupted while packing.
func TestArchiveParts(t *testing.T) {
	e := newEnv(t, nil)
	refs, err := e.b.Sample(ctx(t), e.src.Host, 16) // layers up to 64 KiB
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	layout := ArchiveLayout(dir)
	o := e.opts()
	o.Dest.Dir = layout
	images, _ := Images(refs[:4], KindAdditional, "", "archive", "")
	res, err := Copy(ctx(t), images, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteContent(ArchiveContent(dir), Content{Images: res.Images}); err != nil {
		t.Fatal(err)
	}
	meta := map[string]string{"content.json": ArchiveContent(dir), "index.json": filepath.Join(layout, "index.json"),
		"oci-layout": filepath.Join(layout, "oci-layout")}
	const limit = 48 << 10
	parts, err := WriteArchive(dir, layout, limit, meta)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) < 3 {
		t.Fatalf("%d parts, want several of at most %d bytes", len(parts), limit)
	}
	for _, p := range parts {
		t.Logf("%s: %d bytes, %d blobs, files %v", p.Name, p.Size, len(p.Blobs), p.Files != nil)
	}
	carried := map[string]bool{}
	for _, b := range checkParts(t, dir, parts, limit) {
		if carried[b] {
			t.Errorf("blob %s in two parts", b)
		}
		carried[b] = true
	}
	layoutBlobs, _ := filepath.Glob(filepath.Join(layout, "blobs", "sha256", "*"))
	if len(carried) != len(layoutBlobs) {
		t.Errorf("parts carry %d blobs, the layout has %d", len(carried), len(layoutBlobs))
	}

	// nothing new: no part
	if again, err := WriteArchive(dir, layout, limit, meta); err != nil || len(again) != 0 {
		t.Fatalf("second pack with nothing new: %v, %d parts", err, len(again))
	}
	stat := func(p ArchivePart) os.FileInfo {
		fi, err := os.Stat(filepath.Join(dir, p.Name))
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	before := map[string]os.FileInfo{}
	for _, p := range parts {
		before[p.Name] = stat(p)
	}

	// one more image, a part left half-written by a killed run
	images2, _ := Images(refs, KindAdditional, "", "archive", "")
	res2, err := Copy(ctx(t), images2, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteContent(ArchiveContent(dir), Content{Images: res2.Images}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mirror_000099.tar.partial"), []byte("torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	newParts, err := WriteArchive(dir, layout, limit, meta)
	if err != nil {
		t.Fatal(err)
	}
	if len(newParts) == 0 {
		t.Fatal("the new image's blobs were not packed")
	}
	for _, b := range checkParts(t, dir, newParts, limit) {
		if carried[b] {
			t.Errorf("blob %s packed again", b)
		}
	}
	for _, p := range parts {
		if fi := stat(p); !fi.ModTime().Equal(before[p.Name].ModTime()) || fi.Size() != before[p.Name].Size() {
			t.Errorf("finished part %s rewritten", p.Name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "mirror_000099.tar.partial")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("torn part left behind: %v", err)
	}
	// killed after recording the last part, before renaming it: the next run finishes it
	last := newParts[len(newParts)-1]
	if err := os.Rename(filepath.Join(dir, last.Name), filepath.Join(dir, last.Name+".partial")); err != nil {
		t.Fatal(err)
	}
	if again, err := WriteArchive(dir, layout, limit, meta); err != nil || len(again) != 0 {
		t.Fatalf("resume: %v, %d new parts", err, len(again))
	}
	if _, err := os.Stat(filepath.Join(dir, last.Name)); err != nil {
		t.Fatalf("resume did not finish %s: %v", last.Name, err)
	}

	// carry the parts and archive.json elsewhere, extract, push
	far := t.TempDir()
	idx, err := ReadArchiveIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append([]ArchivePart{{Name: ArchiveIndexFile}}, idx.Parts...) {
		b, err := os.ReadFile(filepath.Join(dir, p.Name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(far, p.Name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	un, err := UnpackArchive(far)
	if err != nil || len(un.Extracted) != len(idx.Parts) || len(un.Missing) != 0 {
		t.Fatalf("unpack: %v %+v", err, un)
	}
	if un2, err := UnpackArchive(far); err != nil || len(un2.Extracted) != 0 || len(un2.Skipped) != len(idx.Parts) {
		t.Fatalf("second unpack extracted again: %v %+v", err, un2)
	}
	c, err := ReadContent(filepath.Join(un.Layout, "content.json"))
	if err != nil {
		t.Fatal(err)
	}
	push, err := ArchiveImages(c, e.dst.Host, "site")
	if err != nil || len(push) != len(refs) {
		t.Fatalf("archive images: %v, %d of %d", err, len(push), len(refs))
	}
	po := e.opts()
	po.SourceDir = un.Layout
	pres, err := Copy(ctx(t), push, po)
	if err != nil {
		t.Fatal(err)
	}
	if vr, err := Verify(ctx(t), Content{Images: pres.Images}, po); err != nil || len(vr.Missing) != 0 || vr.Images != len(refs) {
		t.Fatalf("verify after pushing from the parts: %v %+v", err, vr)
	}

	// a damaged part is refused by name
	f := filepath.Join(far, idx.Parts[0].Name)
	b, _ := os.ReadFile(f)
	b[len(b)/3] ^= 0xff
	_ = os.WriteFile(f, b, 0o644)
	_ = os.RemoveAll(UnpackedLayout(far))
	if _, err := UnpackArchive(far); err == nil || !strings.Contains(err.Error(), idx.Parts[0].Name) || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("damaged part: %v", err)
	}
}

// checkParts reads every part: at most limit bytes unless it holds one blob alone that is larger,
// each blob entry whole and matching its digest. It returns the blobs carried.
func checkParts(t *testing.T, dir string, parts []ArchivePart, limit int64) []string {
	t.Helper()
	var out []string
	for _, p := range parts {
		fi, err := os.Stat(filepath.Join(dir, p.Name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() != p.Size {
			t.Errorf("%s: %d bytes, archive.json says %d", p.Name, fi.Size(), p.Size)
		}
		f, err := os.Open(filepath.Join(dir, p.Name))
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(f)
		n := 0
		var biggest int64
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", p.Name, err)
			}
			data, _ := io.ReadAll(tr)
			if strings.HasPrefix(h.Name, "blobs/") {
				n++
				biggest = max(biggest, int64(len(data)))
				d := digest.Digest("sha256:" + filepath.Base(h.Name))
				if digest.FromBytes(data) != d {
					t.Errorf("%s: %s does not match its digest (split or damaged)", p.Name, h.Name)
				}
				out = append(out, d.String())
			}
		}
		f.Close()
		if fi.Size() > limit && !(n == 1 && biggest > limit-1024-512) {
			t.Errorf("%s: %d bytes > %d with %d blobs", p.Name, fi.Size(), limit, n)
		}
	}
	return out
}
