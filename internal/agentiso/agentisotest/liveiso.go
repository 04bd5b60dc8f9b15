package agentisotest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// LiveISO describes a test ISO laid out like a CoreOS live ISO: images/ignition.img (the ignition
// embed area), kernel-argument areas in isolinux/isolinux.cfg and EFI/redhat/grub.cfg, and either
// coreos/igninfo.json + coreos/kargs.json (RHCOS 4.10+) or the legacy coreiso+ and coreKarg
// headers at the end of the system area (Legacy).
type LiveISO struct {
	// Kargs are the default kernel arguments.
	Kargs string
	// KargSize is the size of each karg area (1139 in the coreos-installer fixture).
	KargSize int
	// IgnitionSize is the size of images/ignition.img (256 KiB in RHCOS).
	IgnitionSize int
	// Ignition, when set, is embedded as config.ign (xz-compressed newc cpio, made by the cpio and
	// xz tools), as openshift-install does for the agent ISO.
	Ignition []byte
	// Legacy writes the system-area headers instead of the JSON info files.
	Legacy bool
	// Gzip compresses the embedded ignition with gzip instead of xz.
	Gzip bool
	// Label is the volume label.
	Label string
}

// DefaultKargs are RHCOS-like default kernel arguments.
const DefaultKargs = "coreos.liveiso=rhcos-416.94.202406251923-0 ignition.firstboot ignition.platform.id=metal"

// Build writes the ISO to out, staging files under a temporary directory next to it.
func (l LiveISO) Build(out string) error {
	if l.Kargs == "" {
		l.Kargs = DefaultKargs
	}
	if l.KargSize == 0 {
		l.KargSize = 1139
	}
	if l.IgnitionSize == 0 {
		l.IgnitionSize = 256 << 10
	}
	if l.Label == "" {
		l.Label = "rhcos-416.94.202406251923-0"
	}
	stage, err := os.MkdirTemp(filepath.Dir(out), ".stage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	area := l.Kargs + "\n" + strings.Repeat("#", l.KargSize-len(l.Kargs)-1)
	grubPrefix := "set timeout=5\nmenuentry 'RHCOS (Live)' --class fedora --class gnu-linux --class gnu --class os {\n\tlinux /images/pxeboot/vmlinuz "
	grub := grubPrefix + area + "\n\tinitrd /images/pxeboot/initrd.img /images/ignition.img\n}\n"
	isoPrefix := "default vesamenu.c32\nlabel linux\n  menu label RHCOS (Live)\n  kernel /images/pxeboot/vmlinuz\n  append initrd=/images/pxeboot/initrd.img,/images/ignition.img "
	isolinux := isoPrefix + area + "\n"
	ign := make([]byte, l.IgnitionSize)
	if l.Ignition != nil {
		data, err := compressedCpio("config.ign", l.Ignition, l.Gzip)
		if err != nil {
			return err
		}
		if len(data) > len(ign) {
			return fmt.Errorf("ignition too large for the area")
		}
		copy(ign, data)
	}
	files := map[string][]byte{
		"EFI/redhat/grub.cfg":       []byte(grub),
		"isolinux/isolinux.cfg":     []byte(isolinux),
		"images/ignition.img":       ign,
		"images/pxeboot/vmlinuz":    bytes.Repeat([]byte("kernel"), 1000),
		"images/pxeboot/initrd.img": bytes.Repeat([]byte("initrd"), 1000),
		"images/pxeboot/rootfs.img": bytes.Repeat([]byte("rootfs"), 4000),
		"zipl.prm":                  []byte(area),
	}
	if !l.Legacy {
		files["coreos/igninfo.json"] = []byte(`{"file": "images/ignition.img"}`)
		ki, _ := json.Marshal(map[string]any{
			"default": l.Kargs,
			"files": []map[string]any{
				{"path": "EFI/redhat/grub.cfg", "offset": len(grubPrefix)},
				{"path": "isolinux/isolinux.cfg", "offset": len(isoPrefix)},
			},
			"size": l.KargSize,
		})
		files["coreos/kargs.json"] = ki
	}
	for p, data := range files {
		full := filepath.Join(stage, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			return err
		}
	}
	cmd := exec.Command("xorriso", "-as", "mkisofs", "-quiet", "-o", out, "-V", l.Label, "-R", "-J", stage)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("xorriso: %v: %s", err, b)
	}
	if l.Legacy {
		return l.writeLegacyHeaders(out, len(grubPrefix), len(isoPrefix))
	}
	return nil
}

func (l LiveISO) writeLegacyHeaders(iso string, grubOff, isoOff int) error {
	ign, err := FileExtent(iso, "/images/ignition.img")
	if err != nil {
		return err
	}
	grub, err := FileExtent(iso, "/EFI/redhat/grub.cfg")
	if err != nil {
		return err
	}
	isolinux, err := FileExtent(iso, "/isolinux/isolinux.cfg")
	if err != nil {
		return err
	}
	zipl, err := FileExtent(iso, "/zipl.prm")
	if err != nil {
		return err
	}
	hdr := make([]byte, 72+24)
	copy(hdr, "coreKarg")
	binary.LittleEndian.PutUint64(hdr[8:], uint64(l.KargSize))
	binary.LittleEndian.PutUint64(hdr[16:], uint64(zipl[0])) // default kargs: a pristine copy
	binary.LittleEndian.PutUint64(hdr[24:], uint64(grub[0]+int64(grubOff)))
	binary.LittleEndian.PutUint64(hdr[32:], uint64(isolinux[0]+int64(isoOff)))
	copy(hdr[72:], "coreiso+")
	binary.LittleEndian.PutUint64(hdr[80:], uint64(ign[0]))
	binary.LittleEndian.PutUint64(hdr[88:], uint64(ign[1]))
	f, err := os.OpenFile(iso, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteAt(hdr, 32768-int64(len(hdr)))
	return err
}

var lbaLine = regexp.MustCompile(`File data lba:\s*\d+\s*,\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*,`)

// FileExtent asks xorriso where a file's data is: byte offset and size.
func FileExtent(iso, path string) ([2]int64, error) {
	out, err := exec.Command("xorriso", "-indev", iso, "-find", path, "-exec", "report_lba", "--").CombinedOutput()
	if err != nil {
		return [2]int64{}, fmt.Errorf("xorriso report_lba %s: %v: %s", path, err, out)
	}
	m := lbaLine.FindSubmatch(out)
	if m == nil {
		return [2]int64{}, fmt.Errorf("xorriso report_lba %s: no extent in %s", path, out)
	}
	lba, _ := strconv.ParseInt(string(m[1]), 10, 64)
	size, _ := strconv.ParseInt(string(m[3]), 10, 64)
	return [2]int64{lba * 2048, size}, nil
}

// compressedCpio makes an xz (CRC32) or gzip newc cpio archive holding one file, with the real tools.
func compressedCpio(name string, data []byte, gz bool) ([]byte, error) {
	dir, err := os.MkdirTemp("", "cpio-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		return nil, err
	}
	compress := "xz -c --check=crc32 --format=xz"
	if gz {
		compress = "gzip -c -n"
	}
	cmd := exec.Command("sh", "-c", "echo "+name+" | cpio --quiet -o -H newc --reproducible | "+compress)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("cpio | xz: %v: %s", err, stderr.String())
	}
	return out, nil
}
