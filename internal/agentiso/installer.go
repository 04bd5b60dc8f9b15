package agentiso

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/mirror"
)

// Where the openshift-install used came from (InstallerInfo.Source).
const (
	FromProfile = "cluster.installer.path"
	FromPATH    = "PATH"
	FromRelease = "release payload"
)

// installerFile is where openshift-install lives in the payload's installer image.
const installerFile = "usr/bin/openshift-install"

// installerComponents are the release components that carry openshift-install, in order of
// preference: `installer` (4.16+ builds it with the baremetal platform), then
// `baremetal-installer` (older payloads put openshift-baremetal-install there under this name).
var installerComponents = []string{"installer", "baremetal-installer"}

// InstallerInfo is the evidence about the openshift-install a build used.
type InstallerInfo struct {
	Path   string `json:"path"`
	Source string `json:"source"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	// For FromRelease: the release and the component image it was read from (mirror, by digest).
	ReleaseImage string `json:"releaseImage,omitempty"`
	Release      string `json:"release,omitempty"`
	Component    string `json:"component,omitempty"`
	Image        string `json:"image,omitempty"`
	// Stamped are the release markers written into the binary, as `oc adm release extract` does.
	Stamped []string `json:"stamped,omitempty"`
	// Cached is set when the binary came from the work dir's cache (nothing read from the registry).
	Cached     bool  `json:"cached,omitempty"`
	LayersRead int   `json:"layersRead,omitempty"`
	BytesRead  int64 `json:"bytesRead,omitempty"`
}

// LookupInstaller returns the openshift-install the profile names, else the one on PATH, with
// its SHA-256; nil (and no error) when there is neither, so the caller extracts it from the release.
func LookupInstaller(profilePath string) (*InstallerInfo, error) {
	info := &InstallerInfo{Path: profilePath, Source: FromProfile}
	if profilePath == "" {
		p, err := exec.LookPath("openshift-install")
		if err != nil {
			return nil, nil
		}
		info.Path, info.Source = p, FromPATH
	} else if _, err := FindInstaller(profilePath); err != nil {
		return nil, err
	}
	sum, size, err := sha256File(info.Path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", info.Source, err)
	}
	info.SHA256, info.Size = sum, size
	return info, nil
}

// ExtractOptions are the inputs of ExtractInstaller.
type ExtractOptions struct {
	// ReleaseImage is the release image in the mirror registry, by digest.
	ReleaseImage string
	// ReleaseArch is the payload's architecture (cluster.release.architecture): the platform
	// image-references is read from when the release image is an index. Default amd64.
	ReleaseArch string
	// Sources map the components' source names to the mirror (the mirror stage's IDMS).
	Sources []ImageDigestSource
	// Registry says how to reach the mirror registry (its Source endpoint is used).
	Registry mirror.Options
	// CacheDir holds extracted binaries: CacheDir/<installer image digest>/openshift-install,
	// and CacheDir/<release digest>.json, which lets a later run skip the registry entirely.
	CacheDir string
}

// ExtractInstaller returns openshift-install for this host from the mirrored release payload,
// without oc: it reads the release's image-references, takes the installer component's image
// (for this host's architecture) from the mirror by digest, streams its layers for
// usr/bin/openshift-install (honouring whiteouts), stamps the release image, version and
// architecture into it as `oc adm release extract` does and records its SHA-256. The result is
// cached; a second call for the same release reads nothing from the registry.
func ExtractInstaller(ctx context.Context, o ExtractOptions) (*InstallerInfo, error) {
	_, relDigest, ok := strings.Cut(o.ReleaseImage, "@")
	if !ok || !strings.HasPrefix(relDigest, "sha256:") {
		return nil, fmt.Errorf("extract openshift-install: release image %q is not by digest", o.ReleaseImage)
	}
	index := filepath.Join(o.CacheDir, "release-"+strings.TrimPrefix(relDigest, "sha256:")+".json")
	if info, err := cachedInstaller(index, o.ReleaseImage); err == nil {
		return info, nil
	}
	arch := o.ReleaseArch
	if arch == "" {
		arch = "amd64"
	}
	rel, err := mirror.ReadRelease(ctx, o.ReleaseImage, "linux/"+arch, o.Registry)
	if err != nil {
		return nil, fmt.Errorf("extract openshift-install: %w", err)
	}
	info := &InstallerInfo{Source: FromRelease, ReleaseImage: o.ReleaseImage, Release: rel.Name}
	var src string
	for _, c := range installerComponents {
		if img, ok := rel.Component(c); ok {
			info.Component, src = c, img
			break
		}
	}
	if src == "" {
		return nil, fmt.Errorf("extract openshift-install: release %s lists no %s component in its image-references; "+
			"set cluster.installer.path", o.ReleaseImage, strings.Join(installerComponents, " or "))
	}
	info.Image = MirrorImage(src, o.Sources)
	if info.Image == "" {
		return nil, fmt.Errorf("extract openshift-install: the %s component %s has no mirror in the mirror stage's "+mirror.IDMSFile+": "+
			"run the mirror stage, or set cluster.installer.path", info.Component, src)
	}
	_, imgDigest, _ := strings.Cut(info.Image, "@")
	dir := filepath.Join(o.CacheDir, strings.ReplaceAll(imgDigest, ":", "-"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dir, ".openshift-install-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	ex, err := mirror.ExtractFile(ctx, info.Image, "linux/"+runtime.GOARCH, installerFile, tmp, o.Registry)
	if err != nil {
		tmp.Close()
		if errors.Is(err, mirror.ErrFileNotFound) {
			return nil, fmt.Errorf("extract openshift-install from the %s component: %w", info.Component, err)
		}
		return nil, fmt.Errorf("extract openshift-install from the %s component (this host is linux/%s): %w", info.Component, runtime.GOARCH, err)
	}
	info.Image, info.LayersRead, info.BytesRead = ex.Image, ex.LayersRead, ex.BytesRead
	relArch := "linux/" + arch
	if rel.Multi {
		relArch = "multi (linux/" + runtime.GOARCH + ")"
	}
	info.Stamped, err = stampRelease(tmp, map[string]string{markerImage: o.ReleaseImage, markerVersion: rel.Name, markerArch: relArch})
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("extract openshift-install: %w", err)
	}
	info.Path = filepath.Join(dir, "openshift-install")
	if err := os.Chmod(tmp.Name(), 0o755); err != nil {
		return nil, err
	}
	if info.SHA256, info.Size, err = sha256File(tmp.Name()); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp.Name(), info.Path); err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(index, append(data, '\n')); err != nil {
		return nil, err
	}
	return info, nil
}

// cachedInstaller returns the binary an earlier extraction for this release left, when it is
// still there with the SHA-256 recorded then.
func cachedInstaller(index, releaseImage string) (*InstallerInfo, error) {
	data, err := fsroot.ReadBeneath(index, fsroot.Index)
	if err != nil {
		return nil, err
	}
	var info InstallerInfo
	if err := json.Unmarshal(data, &info); err != nil {
		return nil, err
	}
	if info.ReleaseImage != releaseImage || info.Path == "" {
		return nil, errors.New("cache entry for another release image")
	}
	sum, _, err := sha256File(info.Path)
	if err != nil || sum != info.SHA256 {
		return nil, fmt.Errorf("cached %s changed or missing", info.Path)
	}
	info.Cached, info.LayersRead, info.BytesRead = true, 0, 0
	return &info, nil
}

func writeFileAtomic(path string, data []byte) error {
	tmp := fmt.Sprintf("%s.tmp-%d-%d", path, os.Getpid(), time.Now().UnixNano())
	// a fresh file, never one (or a link) found at the name
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
