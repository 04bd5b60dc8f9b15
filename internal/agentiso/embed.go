package agentiso

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The on-disk format of a CoreOS live ISO's embed areas, as coreos-installer reads and writes them
// (src/live/embed.rs):
//
//   - Ignition area: a fixed-size region, normally the file images/ignition.img, located by
//     coreos/igninfo.json ({"file": ..., "offset"?, "length"?}); older ISOs carry a 24-byte header
//     at the end of the 32 KiB system area: "coreiso+", offset (u64 LE), length (u64 LE). The area
//     holds an xz-compressed newc cpio archive with config.ign, zero-padded; all zeros means empty.
//   - Kernel-argument areas: located by coreos/kargs.json ({"default", "files": [{"path",
//     "offset", "pad"?, "end"?}], "size"}), each area at the file's extent plus offset; older ISOs
//     carry a 72-byte header just before the coreiso+ one: "coreKarg", area length, offset of the
//     default kargs, then up to six area offsets (u64 LE, 0 ends the list). An area holds the
//     kernel arguments, the end character ('\n') and pad characters ('#') up to its size.

const (
	systemAreaEnd     = 32768
	ignHeaderSize     = 24
	kargHeaderSize    = 72
	kargMaxAreas      = 6
	kargMaxSize       = 2048
	ignHeaderMagic    = "coreiso+"
	kargHeaderMagic   = "coreKarg"
	ignInfoPath       = "coreos/igninfo.json"
	kargInfoPath      = "coreos/kargs.json"
	defaultIgnitionIn = "images/ignition.img"
)

// ErrNotLiveISO is returned when an image has no ignition embed area: not a CoreOS live ISO.
var ErrNotLiveISO = errors.New("not a CoreOS live ISO: no ignition embed area")

// Layout is where a CoreOS live ISO keeps its embed areas.
type Layout struct {
	// Size of the image in bytes.
	Size int64
	// Ignition is the ignition (initrd) embed area.
	Ignition isoExtent
	// KargAreas are the kernel-argument areas; all hold the same arguments.
	KargAreas []KargArea
	// KargSize is the size of every kernel-argument area.
	KargSize int
	// DefaultKargs are the image's built-in kernel arguments; Kargs the ones currently embedded.
	DefaultKargs, Kargs string
}

// KargArea is one kernel-argument area (one per boot config: isolinux, GRUB).
type KargArea struct {
	Offset int64
	Pad    byte
	End    byte
}

// ReadLayout locates the embed areas of a CoreOS live ISO of the given size.
func ReadLayout(r io.ReaderAt, size int64) (*Layout, error) {
	l := &Layout{Size: size}
	var err error
	if l.Ignition, err = ignitionArea(r); err != nil {
		return nil, err
	}
	if l.Ignition.Offset+l.Ignition.Length > size {
		return nil, fmt.Errorf("ignition embed area [%d,+%d) beyond the image's %d bytes", l.Ignition.Offset, l.Ignition.Length, size)
	}
	if err := l.readKargAreas(r); err != nil {
		return nil, err
	}
	return l, nil
}

func ignitionArea(r io.ReaderAt) (isoExtent, error) {
	info, err := readISOFile(r, ignInfoPath, 64<<10)
	switch {
	case err == nil:
		var ii struct {
			File   string `json:"file"`
			Offset *int64 `json:"offset"`
			Length *int64 `json:"length"`
		}
		if err := json.Unmarshal(info, &ii); err != nil {
			return isoExtent{}, fmt.Errorf("decode %s: %w", ignInfoPath, err)
		}
		ext, err := isoLookup(r, ii.File)
		if err != nil {
			return isoExtent{}, fmt.Errorf("%s names %s: %w", ignInfoPath, ii.File, err)
		}
		if ii.Offset != nil {
			if *ii.Offset > ext.Length {
				return isoExtent{}, fmt.Errorf("%s: offset beyond %s", ignInfoPath, ii.File)
			}
			ext.Offset += *ii.Offset
			ext.Length -= *ii.Offset
		}
		if ii.Length != nil {
			if *ii.Length > ext.Length {
				return isoExtent{}, fmt.Errorf("%s: length beyond %s", ignInfoPath, ii.File)
			}
			ext.Length = *ii.Length
		}
		return ext, nil
	case !errors.Is(err, errNotFound):
		return isoExtent{}, err
	}
	if ext, err := isoLookup(r, defaultIgnitionIn); err == nil {
		return ext, nil
	} else if !errors.Is(err, errNotFound) {
		return isoExtent{}, err
	}
	// Legacy header in the system area (RHCOS before igninfo.json).
	var hdr [ignHeaderSize]byte
	if _, err := r.ReadAt(hdr[:], systemAreaEnd-ignHeaderSize); err != nil {
		return isoExtent{}, fmt.Errorf("read system area: %w", err)
	}
	if string(hdr[:8]) != ignHeaderMagic {
		return isoExtent{}, ErrNotLiveISO
	}
	return isoExtent{
		Offset: int64(binary.LittleEndian.Uint64(hdr[8:16])),
		Length: int64(binary.LittleEndian.Uint64(hdr[16:24])),
	}, nil
}

func (l *Layout) readKargAreas(r io.ReaderAt) error {
	info, err := readISOFile(r, kargInfoPath, 64<<10)
	if errors.Is(err, errNotFound) {
		return l.readKargHeader(r)
	}
	if err != nil {
		return err
	}
	var ki struct {
		Default string `json:"default"`
		Files   []struct {
			Path   string  `json:"path"`
			Offset int64   `json:"offset"`
			Pad    *string `json:"pad"`
			End    *string `json:"end"`
		} `json:"files"`
		Size int `json:"size"`
	}
	if err := json.Unmarshal(info, &ki); err != nil {
		return fmt.Errorf("decode %s: %w", kargInfoPath, err)
	}
	if ki.Size <= 0 || ki.Size > kargMaxSize || len(ki.Default) > ki.Size {
		return fmt.Errorf("%s: implausible area size %d", kargInfoPath, ki.Size)
	}
	l.KargSize, l.DefaultKargs = ki.Size, ki.Default
	for _, f := range ki.Files {
		ext, err := isoLookup(r, f.Path)
		if err != nil {
			return fmt.Errorf("%s names %s: %w", kargInfoPath, f.Path, err)
		}
		if f.Offset+int64(ki.Size) > ext.Length {
			return fmt.Errorf("%s: area in %s beyond the file", kargInfoPath, f.Path)
		}
		a := KargArea{Offset: ext.Offset + f.Offset, Pad: '#', End: '\n'}
		if f.Pad != nil && len(*f.Pad) == 1 {
			a.Pad = (*f.Pad)[0]
		}
		if f.End != nil && len(*f.End) == 1 {
			a.End = (*f.End)[0]
		}
		l.KargAreas = append(l.KargAreas, a)
	}
	return l.readCurrentKargs(r)
}

func (l *Layout) readKargHeader(r io.ReaderAt) error {
	var hdr [kargHeaderSize]byte
	if _, err := r.ReadAt(hdr[:], systemAreaEnd-ignHeaderSize-kargHeaderSize); err != nil {
		return fmt.Errorf("read system area: %w", err)
	}
	if string(hdr[:8]) != kargHeaderMagic {
		return nil // an ISO without karg areas: ignition only
	}
	size := binary.LittleEndian.Uint64(hdr[8:16])
	if size == 0 || size > kargMaxSize {
		return fmt.Errorf("karg embed header: implausible area size %d", size)
	}
	l.KargSize = int(size)
	def := make([]byte, size)
	if _, err := r.ReadAt(def, int64(binary.LittleEndian.Uint64(hdr[16:24]))); err != nil {
		return fmt.Errorf("read default kargs: %w", err)
	}
	l.DefaultKargs = parseKargs(def, '#', '\n')
	for i := 0; i < kargMaxAreas; i++ {
		off := binary.LittleEndian.Uint64(hdr[24+8*i:])
		if off == 0 {
			break
		}
		l.KargAreas = append(l.KargAreas, KargArea{Offset: int64(off), Pad: '#', End: '\n'})
	}
	return l.readCurrentKargs(r)
}

// readCurrentKargs reads every area and checks they agree, as coreos-installer does.
func (l *Layout) readCurrentKargs(r io.ReaderAt) error {
	if len(l.KargAreas) == 0 {
		return errors.New("karg embed info lists no areas: corrupted CoreOS ISO")
	}
	buf := make([]byte, l.KargSize)
	for i, a := range l.KargAreas {
		if a.Offset+int64(l.KargSize) > l.Size {
			return fmt.Errorf("karg area at %d beyond the image", a.Offset)
		}
		if _, err := r.ReadAt(buf, a.Offset); err != nil {
			return fmt.Errorf("read karg area: %w", err)
		}
		k := parseKargs(buf, a.Pad, a.End)
		if i == 0 {
			l.Kargs = k
		} else if k != l.Kargs {
			return fmt.Errorf("karg areas disagree (%q at %d, %q at %d): corrupted CoreOS ISO", l.Kargs, l.KargAreas[0].Offset, k, a.Offset)
		}
	}
	return nil
}

func parseKargs(area []byte, pad, end byte) string {
	s := strings.TrimRight(string(area), string(pad))
	s = strings.TrimRight(s, string(end))
	return strings.TrimSpace(s)
}

func readISOFile(r io.ReaderAt, path string, max int64) ([]byte, error) {
	ext, err := isoLookup(r, path)
	if err != nil {
		return nil, err
	}
	if ext.Length > max {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d expected", path, ext.Length, max)
	}
	buf := make([]byte, ext.Length)
	if _, err := r.ReadAt(buf, ext.Offset); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	// kargs.json is space-padded when rewritten in place; JSON decoding ignores trailing spaces.
	return bytes.TrimRight(buf, " \x00"), nil
}
