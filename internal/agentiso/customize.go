package agentiso

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Customization is what one node's ISO view adds to the base ISO.
type Customization struct {
	// KernelArgs are appended to the kernel arguments embedded in the ISO
	// ("console=ttyS1,115200n8" for iDRAC serial-over-LAN, a static "ip=" for first boot).
	KernelArgs []string
	// Ignition is an Ignition config (spec 3.x JSON) merged into the embedded one: it is added to
	// the embedded config's ignition.config.merge as a data URL, so both apply. When the ISO
	// carries no config it becomes the config.
	Ignition []byte
}

// Empty reports whether c changes nothing.
func (c Customization) Empty() bool { return len(c.KernelArgs) == 0 && len(c.Ignition) == 0 }

// Patch replaces Length bytes at Offset: Data, then zeros up to Length. Keeping the zero tail
// implicit keeps an emptied 256 KiB ignition area from costing 256 KiB per node.
type Patch struct {
	Offset int64
	Length int64
	Data   []byte
}

// Customize computes the patches that turn the base ISO into a node's view. It reads only the
// embed areas from base.
func (l *Layout) Customize(base io.ReaderAt, c Customization) ([]Patch, error) {
	var patches []Patch
	if len(c.KernelArgs) > 0 {
		if len(l.KargAreas) == 0 {
			return nil, errors.New("kernel arguments asked for, but the ISO has no karg embed areas (RHCOS older than 4.10?)")
		}
		for _, a := range c.KernelArgs {
			if strings.ContainsAny(a, "\n#") || strings.TrimSpace(a) != a || a == "" {
				return nil, fmt.Errorf("kernel argument %q: no spaces at the ends, newlines or '#'", a)
			}
		}
		kargs := strings.TrimSpace(l.Kargs + " " + strings.Join(c.KernelArgs, " "))
		if len(kargs) >= l.KargSize {
			return nil, fmt.Errorf("kernel arguments take %d bytes, the ISO's areas hold %d", len(kargs)+1, l.KargSize)
		}
		for _, a := range l.KargAreas {
			area := bytes.Repeat([]byte{a.Pad}, l.KargSize)
			copy(area, kargs)
			area[len(kargs)] = a.End
			patches = append(patches, Patch{Offset: a.Offset, Length: int64(l.KargSize), Data: area})
		}
	}
	if len(c.Ignition) > 0 {
		area := make([]byte, l.Ignition.Length)
		if _, err := base.ReadAt(area, l.Ignition.Offset); err != nil {
			return nil, fmt.Errorf("read ignition area: %w", err)
		}
		files, err := decodeInitrd(area)
		if err != nil {
			return nil, err
		}
		if files, err = mergeIgnition(files, c.Ignition); err != nil {
			return nil, err
		}
		data, err := encodeInitrd(files)
		if err != nil {
			return nil, err
		}
		if int64(len(data)) > l.Ignition.Length {
			return nil, fmt.Errorf("compressed ignition is %d bytes, the ISO's embed area holds %d", len(data), l.Ignition.Length)
		}
		patches = append(patches, Patch{Offset: l.Ignition.Offset, Length: l.Ignition.Length, Data: data})
	}
	sort.Slice(patches, func(i, j int) bool { return patches[i].Offset < patches[j].Offset })
	return patches, nil
}

// mergeIgnition adds fragment to the embedded config.ign's merge list (or makes it the config).
func mergeIgnition(files []initrdFile, fragment []byte) ([]initrdFile, error) {
	var frag struct {
		Ignition struct {
			Version string `json:"version"`
		} `json:"ignition"`
	}
	if err := json.Unmarshal(fragment, &frag); err != nil {
		return nil, fmt.Errorf("ignition fragment: not JSON: %w", err)
	}
	if !strings.HasPrefix(frag.Ignition.Version, "3.") {
		return nil, fmt.Errorf("ignition fragment: ignition.version %q, want a 3.x spec", frag.Ignition.Version)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, fragment); err != nil {
		return nil, fmt.Errorf("ignition fragment: %w", err)
	}
	for i, f := range files {
		if f.Name != initrdIgnitionPath {
			continue
		}
		var cfg map[string]any
		if err := json.Unmarshal(f.Data, &cfg); err != nil {
			return nil, fmt.Errorf("embedded %s: %w", initrdIgnitionPath, err)
		}
		ign, _ := cfg["ignition"].(map[string]any)
		if ign == nil {
			return nil, fmt.Errorf("embedded %s has no ignition section", initrdIgnitionPath)
		}
		conf, _ := ign["config"].(map[string]any)
		if conf == nil {
			conf = map[string]any{}
			ign["config"] = conf
		}
		merge, _ := conf["merge"].([]any)
		conf["merge"] = append(merge, map[string]any{
			"source": "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString(compact.Bytes()),
		})
		data, err := json.Marshal(cfg) // map keys sorted: deterministic
		if err != nil {
			return nil, err
		}
		files[i].Data = data
		return files, nil
	}
	files = append(files, initrdFile{Name: initrdIgnitionPath, Mode: 0o100644, Data: compact.Bytes()})
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files, nil
}

// PatchesDigest is a stable hash of a patch list (part of a node view's ETag).
func PatchesDigest(patches []Patch) string {
	h := sha256.New()
	var b [16]byte
	for _, p := range patches {
		binary.LittleEndian.PutUint64(b[:8], uint64(p.Offset))
		binary.LittleEndian.PutUint64(b[8:], uint64(p.Length))
		h.Write(b[:])
		h.Write(p.Data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// View is a node's ISO: the base image's bytes with the patches overlaid. It is an io.ReaderAt
// safe for concurrent use; nothing is copied.
type View struct {
	base    io.ReaderAt
	size    int64
	patches []Patch
}

// NewView overlays patches (which must not overlap and must lie inside the image) on base.
func NewView(base io.ReaderAt, size int64, patches []Patch) (*View, error) {
	ps := append([]Patch(nil), patches...)
	sort.Slice(ps, func(i, j int) bool { return ps[i].Offset < ps[j].Offset })
	var end int64
	for _, p := range ps {
		if p.Offset < end || p.Offset < 0 || p.Offset+p.Length > size || int64(len(p.Data)) > p.Length {
			return nil, fmt.Errorf("patch at %d (+%d) overlaps another or lies outside the %d-byte image", p.Offset, p.Length, size)
		}
		end = p.Offset + p.Length
	}
	return &View{base: base, size: size, patches: ps}, nil
}

// Size is the view's length in bytes (the base image's).
func (v *View) Size() int64 { return v.size }

// ReadAt reads the base bytes and overlays every patch that intersects [off, off+len(p)).
func (v *View) ReadAt(p []byte, off int64) (int, error) {
	if off >= v.size {
		return 0, io.EOF
	}
	want := len(p)
	if rem := v.size - off; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := v.base.ReadAt(p, off)
	if err != nil && !(errors.Is(err, io.EOF) && n == len(p)) {
		return n, err
	}
	end := off + int64(len(p))
	i := sort.Search(len(v.patches), func(i int) bool { return v.patches[i].Offset+v.patches[i].Length > off })
	for ; i < len(v.patches) && v.patches[i].Offset < end; i++ {
		pt := v.patches[i]
		lo, hi := max(pt.Offset, off), min(pt.Offset+pt.Length, end)
		dst := p[lo-off : hi-off]
		// data part, then the implicit zero tail
		dataEnd := pt.Offset + int64(len(pt.Data))
		if lo < dataEnd {
			c := copy(dst, pt.Data[lo-pt.Offset:min(hi, dataEnd)-pt.Offset])
			dst = dst[c:]
		}
		clear(dst)
	}
	if len(p) < want {
		return len(p), io.EOF
	}
	return len(p), nil
}
