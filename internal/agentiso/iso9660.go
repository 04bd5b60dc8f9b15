package agentiso

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The smallest ISO 9660 reader that locates a file's extent: enough to find the embed areas the
// way coreos-installer does (src/iso9660.rs), without mounting or extracting anything.

const sectorSize = 2048

// errNotFound is returned by isoLookup when a path is absent.
var errNotFound = errors.New("not found in ISO 9660 tree")

// isoExtent is where a file's bytes are in the image.
type isoExtent struct {
	Offset int64
	Length int64
}

type isoRecord struct {
	name   string
	extent isoExtent
	dir    bool
}

// isoRoot reads the primary volume descriptor and returns the root directory record.
func isoRoot(r io.ReaderAt) (isoRecord, error) {
	for sector := int64(16); sector < 16+64; sector++ {
		var vd [sectorSize]byte
		if _, err := r.ReadAt(vd[:], sector*sectorSize); err != nil {
			return isoRecord{}, fmt.Errorf("read volume descriptor: %w", err)
		}
		if string(vd[1:6]) != "CD001" {
			return isoRecord{}, errors.New("not an ISO 9660 image (no CD001 volume descriptor)")
		}
		switch vd[0] {
		case 1: // primary volume descriptor
			rec, _, err := parseRecord(vd[156:190])
			return rec, err
		case 255: // terminator
			return isoRecord{}, errors.New("ISO 9660 image has no primary volume descriptor")
		}
	}
	return isoRecord{}, errors.New("ISO 9660 volume descriptor set not terminated")
}

// parseRecord decodes one directory record; it returns the record length consumed.
func parseRecord(b []byte) (isoRecord, int, error) {
	if len(b) < 34 || int(b[0]) < 34 || int(b[0]) > len(b) {
		return isoRecord{}, 0, errors.New("malformed ISO 9660 directory record")
	}
	n := int(b[0])
	nameLen := int(b[32])
	if 33+nameLen > n {
		return isoRecord{}, 0, errors.New("malformed ISO 9660 directory record name")
	}
	return isoRecord{
		name: string(b[33 : 33+nameLen]),
		extent: isoExtent{
			Offset: int64(binary.LittleEndian.Uint32(b[2:6])) * sectorSize,
			Length: int64(binary.LittleEndian.Uint32(b[10:14])),
		},
		dir: b[25]&2 != 0,
	}, n, nil
}

// readDir lists a directory's records, without "." and "..".
func readDir(r io.ReaderAt, dir isoRecord) ([]isoRecord, error) {
	if dir.extent.Length > 64<<20 {
		return nil, errors.New("ISO 9660 directory implausibly large")
	}
	buf := make([]byte, dir.extent.Length)
	if _, err := r.ReadAt(buf, dir.extent.Offset); err != nil {
		return nil, fmt.Errorf("read ISO 9660 directory: %w", err)
	}
	var out []isoRecord
	for pos := 0; pos < len(buf); {
		if buf[pos] == 0 { // records never cross sectors; zero fill up to the next one
			pos = (pos/sectorSize + 1) * sectorSize
			continue
		}
		rec, n, err := parseRecord(buf[pos:])
		if err != nil {
			return nil, err
		}
		pos += n
		if rec.name == "\x00" || rec.name == "\x01" {
			continue
		}
		out = append(out, rec)
	}
	return out, nil
}

// isoLookup finds a file by path ("coreos/igninfo.json"), matching names as coreos-installer
// does: case-insensitively, ignoring the ";1" version, and also in their 8.3-truncated form
// ("IGNINFO.JSO"), since mkisofs truncates names in the plain ISO 9660 tree.
func isoLookup(r io.ReaderAt, path string) (isoExtent, error) {
	cur, err := isoRoot(r)
	if err != nil {
		return isoExtent{}, err
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, part := range parts {
		entries, err := readDir(r, cur)
		if err != nil {
			return isoExtent{}, err
		}
		found := false
		for _, e := range entries {
			if isoNameMatch(e.name, part) {
				if e.dir != (i < len(parts)-1) {
					continue
				}
				cur, found = e, true
				break
			}
		}
		if !found {
			return isoExtent{}, fmt.Errorf("%s: %w", path, errNotFound)
		}
	}
	return cur.extent, nil
}

func isoNameMatch(isoName, want string) bool {
	if i := strings.IndexByte(isoName, ';'); i >= 0 {
		isoName = isoName[:i]
	}
	isoName = strings.ToUpper(strings.TrimSuffix(isoName, "."))
	want = strings.ToUpper(want)
	return isoName == want || isoName == trunc83(want) || trunc83(isoName) == trunc83(want)
}

// trunc83 shortens a name to 8 characters of stem and 3 of extension.
func trunc83(name string) string {
	stem, ext := name, ""
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		stem, ext = name[:i], name[i+1:]
	}
	if len(stem) > 8 {
		stem = stem[:8]
	}
	if len(ext) > 3 {
		ext = ext[:3]
	}
	if ext == "" {
		return stem
	}
	return stem + "." + ext
}
