package agentiso

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/ulikunitz/xz"
)

// initrdIgnitionPath is where the live initramfs expects the embedded Ignition config.
const initrdIgnitionPath = "config.ign"

// initrdFile is one regular file of an embed-area initrd.
type initrdFile struct {
	Name string
	Mode uint32
	Data []byte
}

// decodeInitrd reads the ignition embed area's contents: an xz-compressed (or plain) newc cpio
// archive (or gzip-compressed), possibly several concatenated, zero-padded. Only regular files are kept (that is all
// coreos-installer writes there).
func decodeInitrd(area []byte) ([]initrdFile, error) {
	data := bytes.TrimRight(area, "\x00")
	if len(data) == 0 {
		return nil, nil
	}
	var raw []byte
	switch {
	case bytes.HasPrefix(data, []byte("\x1f\x8b")): // gzip (older assisted-image-service and coreos-installer)
		// not the trimmed data: a gzip trailer may end in zero bytes
		zr, err := gzip.NewReader(bytes.NewReader(area))
		if err != nil {
			return nil, fmt.Errorf("ignition area: %w", err)
		}
		zr.Multistream(false) // the zero padding after the member is not another member
		if raw, err = io.ReadAll(zr); err != nil {
			return nil, fmt.Errorf("ignition area: gzip: %w", err)
		}
	case bytes.HasPrefix(data, []byte("\xfd7zXZ\x00")):
		zr, err := xz.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("ignition area: %w", err)
		}
		if raw, err = io.ReadAll(zr); err != nil {
			return nil, fmt.Errorf("ignition area: xz: %w", err)
		}
	default:
		raw = data
	}
	files := map[string]initrdFile{}
	for len(raw) > 0 {
		if raw[0] == 0 { // padding between concatenated archives
			raw = raw[1:]
			continue
		}
		if len(raw) < 110 || string(raw[:6]) != "070701" {
			return nil, errors.New("ignition area: not a newc cpio archive")
		}
		field := func(i int) (uint64, error) { return strconv.ParseUint(string(raw[6+8*i:14+8*i]), 16, 32) }
		mode, err1 := field(1)
		size, err2 := field(6)
		nameLen, err3 := field(11)
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("ignition area: cpio header: %w", err)
		}
		nameEnd := 110 + int(nameLen)
		dataStart := align4(nameEnd)
		dataEnd := dataStart + int(size)
		if nameLen == 0 || dataEnd > len(raw) {
			return nil, errors.New("ignition area: truncated cpio archive")
		}
		name := string(raw[110 : nameEnd-1])
		if name != "TRAILER!!!" && mode&0o170000 == 0o100000 {
			files[name] = initrdFile{Name: name, Mode: uint32(mode), Data: append([]byte(nil), raw[dataStart:dataEnd]...)}
		}
		raw = raw[min(align4(dataEnd), len(raw)):]
	}
	out := make([]initrdFile, 0, len(files))
	for _, f := range files {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// encodeInitrd writes files as a newc cpio archive compressed with xz using CRC32 checks, the
// form the kernel's initramfs unpacker and coreos-installer both expect.
func encodeInitrd(files []initrdFile) ([]byte, error) {
	var cpio bytes.Buffer
	w := bufio.NewWriter(&cpio)
	ino := 1
	writeEntry := func(name string, mode uint32, data []byte) {
		hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
			ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
		ino++
		w.WriteString(hdr)
		w.WriteString(name)
		w.WriteByte(0)
		pad(w, 110+len(name)+1)
		w.Write(data)
		pad(w, len(data))
	}
	for _, f := range files {
		writeEntry(f.Name, f.Mode, f.Data)
	}
	writeEntry("TRAILER!!!", 0, nil)
	if err := w.Flush(); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	// A dictionary no larger than the data: compression is as good, the encoder allocates far less
	// (8 MiB by default, per node), and the kernel's decompressor needs less memory.
	dict := 1 << 16
	for dict < cpio.Len() && dict < 8<<20 {
		dict <<= 1
	}
	cfg := xz.WriterConfig{CheckSum: xz.CRC32, DictCap: dict}
	zw, err := cfg.NewWriter(&out)
	if err != nil {
		return nil, fmt.Errorf("xz: %w", err)
	}
	if _, err := zw.Write(cpio.Bytes()); err != nil {
		return nil, fmt.Errorf("xz: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("xz: %w", err)
	}
	return out.Bytes(), nil
}

func align4(n int) int { return (n + 3) &^ 3 }

func pad(w *bufio.Writer, n int) {
	for i := n; i%4 != 0; i++ {
		w.WriteByte(0)
	}
}
