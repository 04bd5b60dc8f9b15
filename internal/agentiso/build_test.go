package agentiso

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso/agentisotest"
)

var (
	doubleOnce sync.Once
	doublePath string
	doubleErr  error
)

// installerDouble builds the openshift-install test double once per test binary.
func installerDouble(t testing.TB) string {
	t.Helper()
	needTools(t)
	doubleOnce.Do(func() {
		dir, err := os.MkdirTemp("", "openshift-install-double-")
		if err != nil {
			doubleErr = err
			return
		}
		doublePath, doubleErr = agentisotest.BuildInstallerDouble(dir)
	})
	if doubleErr != nil {
		t.Fatalf("build test double: %v", doubleErr)
	}
	return doublePath
}

const mirrorRelease = "registry.lab.example:8443/ocp/openshift/release-images@sha256:1111111111111111111111111111111111111111111111111111111111111111"

func TestBuildWithInstallerDouble(t *testing.T) {
	bin := installerDouble(t)
	r := renderProfile(t, "dell-xe7740-h200")
	work := t.TempDir()
	var mu sync.Mutex
	var lines []string
	res, err := Build(context.Background(), BuildOptions{WorkDir: work, Rendered: r, Installer: bin, ReleaseVersion: "4.16.3",
		ReleaseImage: mirrorRelease, Log: func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(res.ISO)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if res.SHA256 != hex.EncodeToString(sum[:]) || res.Size != int64(len(data)) || res.InstallerVersion != "4.16.3" {
		t.Errorf("result %+v does not match the ISO on disk", res)
	}
	if !strings.Contains(strings.Join(lines, "\n"), "The rendezvous host IP (node0 IP) is 10.40.10.11") {
		t.Errorf("installer log not streamed: %q", lines)
	}
	// read back what the double received through the ISO it wrote, with osirrox, xz and cpio
	area, err := agentisotest.ExtractFile(res.ISO, "/images/ignition.img")
	if err != nil {
		t.Fatal(err)
	}
	files, err := agentisotest.Initrd(area)
	if err != nil {
		t.Fatal(err)
	}
	var ign struct {
		Storage struct {
			Files []struct {
				Contents struct {
					Source string `json:"source"`
				} `json:"contents"`
			} `json:"files"`
		} `json:"storage"`
	}
	if err := json.Unmarshal(files["config.ign"], &ign); err != nil || len(ign.Storage.Files) != 1 {
		t.Fatalf("config.ign: %v %s", err, files["config.ign"])
	}
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(ign.Storage.Files[0].Contents.Source, "data:;base64,"))
	var got received
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.ReleaseImage != mirrorRelease || len(got.Hosts) != 5 || len(got.MACs) != 8 || len(got.Manifests) != 5 {
		t.Errorf("installer received %+v", got)
	}
	if _, err := os.Stat(filepath.Join(work, InstallerDir, "auth", "kubeconfig")); err != nil {
		t.Errorf("installer state not kept: %v", err)
	}
	// the built ISO is a live ISO we can customize
	if _, err := Prepare(PrepareOptions{BaseISO: res.ISO, Nodes: map[string]Customization{"x": {KernelArgs: []string{"console=ttyS1,115200n8"}}}}); err != nil {
		t.Errorf("built ISO not customizable: %v", err)
	}
}

// received mirrors what the test double records.
type received struct {
	Cluster      string   `json:"cluster"`
	Hosts        []string `json:"hosts"`
	MACs         []string `json:"macs"`
	Manifests    []string `json:"manifests"`
	ReleaseImage string   `json:"releaseImage"`
}

func TestBuildFailures(t *testing.T) {
	bin := installerDouble(t)
	r := renderProfile(t, "lab")
	cases := map[string]struct {
		opts BuildOptions
		env  string
		want string
	}{
		"version mismatch": {BuildOptions{ReleaseVersion: "4.17.1"}, "", "openshift-install is version 4.16.3 but cluster.release.version is 4.17.1"},
		"release by tag":   {BuildOptions{ReleaseVersion: "4.16.3", ReleaseImage: "registry/x:4.16.3"}, "", "by digest"},
		"installer fails":  {BuildOptions{ReleaseVersion: "4.16.3"}, "OPENSHIFT_INSTALL_DOUBLE_FAIL=failed to fetch Agent Installer ISO: boom", "boom"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if c.env != "" {
				k, v, _ := strings.Cut(c.env, "=")
				t.Setenv(k, v)
			}
			c.opts.WorkDir, c.opts.Rendered, c.opts.Installer = t.TempDir(), r, bin
			_, err := Build(context.Background(), c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func TestFindInstaller(t *testing.T) {
	if _, err := FindInstaller("/nonexistent/openshift-install"); err == nil || !strings.Contains(err.Error(), "cluster.installer.path") {
		t.Errorf("missing path: %v", err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "openshift-install")
	os.WriteFile(p, []byte("#!/bin/sh\n"), 0o644)
	if _, err := FindInstaller(p); err == nil {
		t.Error("non-executable accepted")
	}
	os.Chmod(p, 0o755)
	t.Setenv("PATH", dir)
	if got, err := FindInstaller(""); err != nil || got != p {
		t.Errorf("PATH lookup = %q, %v", got, err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := FindInstaller(""); err == nil || !strings.Contains(err.Error(), "extracts it from the mirrored release payload") {
		t.Errorf("absent: %v", err)
	}
}
