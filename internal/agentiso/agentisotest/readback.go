package agentisotest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ExtractFile extracts one file from an ISO with osirrox.
func ExtractFile(iso, path string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "osirrox-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	dst := filepath.Join(dir, "out")
	if out, err := exec.Command("osirrox", "-indev", iso, "-extract", path, dst).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("osirrox extract %s: %v: %s", path, err, out)
	}
	return os.ReadFile(dst)
}

// IsoinfoFile reads one file from an ISO with isoinfo (Rock Ridge names).
func IsoinfoFile(iso, path string) ([]byte, error) {
	out, err := exec.Command("isoinfo", "-R", "-i", iso, "-x", path).Output()
	if err != nil {
		return nil, fmt.Errorf("isoinfo -x %s: %v", path, err)
	}
	return out, nil
}

// Initrd decompresses an ignition embed area with `xz -d` (after stripping the zero padding) and
// lists (cpio -t) and reads (cpio -i --to-stdout) it: file name → contents.
func Initrd(area []byte) (map[string][]byte, error) {
	data := bytes.TrimRight(area, "\x00")
	if len(data) == 0 {
		return map[string][]byte{}, nil
	}
	xzCmd := exec.Command("xz", "-dc")
	xzCmd.Stdin = bytes.NewReader(data)
	raw, err := xzCmd.Output()
	if err != nil {
		return nil, fmt.Errorf("xz -d: %v", err)
	}
	list := exec.Command("cpio", "--quiet", "-t")
	list.Stdin = bytes.NewReader(raw)
	names, err := list.Output()
	if err != nil {
		return nil, fmt.Errorf("cpio -t: %v", err)
	}
	out := map[string][]byte{}
	for _, n := range strings.Fields(string(names)) {
		get := exec.Command("cpio", "--quiet", "-i", "--to-stdout", n)
		get.Stdin = bytes.NewReader(raw)
		b, err := get.Output()
		if err != nil {
			return nil, fmt.Errorf("cpio -i %s: %v", n, err)
		}
		out[n] = b
	}
	return out, nil
}

// KargsIn returns the kernel arguments of the area starting right after prefix in a boot config
// (up to the first newline): what the bootloader will pass.
func KargsIn(cfg []byte, prefix string) (string, error) {
	s := string(cfg)
	i := strings.Index(s, prefix)
	if i < 0 {
		return "", fmt.Errorf("no %q in boot config", prefix)
	}
	rest := s[i+len(prefix):]
	if j := strings.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	return rest, nil
}
