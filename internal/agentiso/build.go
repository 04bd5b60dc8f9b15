package agentiso

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/filehash"
	"github.com/bootstrap-dev/bootstrap/internal/poll"
)

// InstallerDir is the directory, under the work dir, where openshift-install runs. It keeps the
// installer's state (auth/kubeconfig, .openshift_install_state.json) for the install stage, so it
// is cleaned before each build, never after.
const InstallerDir = "installer"

// FindInstaller returns the openshift-install to use: the profile's path when set, else the
// one on PATH. (The iso stage, failing both, extracts it from the mirrored release: ExtractInstaller.)
func FindInstaller(profilePath string) (string, error) {
	if profilePath != "" {
		st, err := os.Stat(profilePath)
		if err != nil {
			return "", fmt.Errorf("cluster.installer.path: %w", err)
		}
		if st.IsDir() || st.Mode().Perm()&0o111 == 0 {
			return "", fmt.Errorf("cluster.installer.path: %s is not an executable file", profilePath)
		}
		return profilePath, nil
	}
	p, err := exec.LookPath("openshift-install")
	if err != nil {
		return "", errors.New("openshift-install not found: set cluster.installer.path, put it on PATH, or run the mirror " +
			"stage so that the iso stage extracts it from the mirrored release payload")
	}
	return p, nil
}

// BuildOptions are the inputs of Build.
type BuildOptions struct {
	// WorkDir is the work dir; the installer runs in WorkDir/installer.
	WorkDir   string
	Rendered  *Rendered
	Installer string
	// ReleaseVersion is cluster.release.version; the installer's must match.
	ReleaseVersion string
	// ReleaseImage is the release image in the mirror, by digest; passed as
	// OPENSHIFT_INSTALL_RELEASE_IMAGE_OVERRIDE. Empty keeps the installer's built-in one.
	ReleaseImage string
	// Log receives every line the installer writes (stdout and stderr), as it writes it.
	Log func(line string)
	// Info, when set, is recorded in the result (where the installer came from, its SHA-256).
	Info *InstallerInfo
}

// BuildResult is the agent ISO written and the evidence about how.
type BuildResult struct {
	ISO              string  `json:"iso"`
	SHA256           string  `json:"sha256"`
	Size             int64   `json:"size"`
	InstallerPath    string  `json:"installerPath"`
	InstallerVersion string  `json:"installerVersion"`
	ReleaseImage     string  `json:"releaseImage,omitempty"`
	Inputs           Digests `json:"inputs"`
	// Installer is where openshift-install came from and its SHA-256.
	Installer *InstallerInfo `json:"installer,omitempty"`
}

// Build runs `openshift-install agent create image` in a clean WorkDir/installer holding the
// rendered files and returns the ISO's path and SHA-256.
func Build(ctx context.Context, opts BuildOptions) (*BuildResult, error) {
	if opts.ReleaseImage != "" && !strings.Contains(opts.ReleaseImage, "@sha256:") {
		return nil, fmt.Errorf("release image %q: the override must point at the mirror by digest", opts.ReleaseImage)
	}
	// `version` runs without the override so that the installer reports its own release.
	vc := installerCommand(ctx, opts.Installer, "version")
	vc.Env = withoutEnv(os.Environ(), "OPENSHIFT_INSTALL_RELEASE_IMAGE_OVERRIDE")
	out, err := vc.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s version: %w: %s", opts.Installer, err, firstLine(string(out)))
	}
	version, err := InstallerVersion(string(out))
	if err != nil {
		return nil, err
	}
	if err := CheckInstallerVersion(opts.ReleaseVersion, version); err != nil {
		return nil, err
	}
	if err := CheckInstallerRelease(opts.ReleaseImage, InstallerReleaseImage(string(out))); err != nil {
		return nil, err
	}
	dir := filepath.Join(opts.WorkDir, InstallerDir)
	if err := removeAllRetry(dir); err != nil {
		return nil, fmt.Errorf("clean %s: %w", dir, err)
	}
	if _, err := opts.Rendered.Write(dir); err != nil {
		return nil, err
	}
	cmd := installerCommand(ctx, opts.Installer, "agent", "create", "image", "--dir", dir, "--log-level", "info")
	cmd.Env = os.Environ()
	if opts.ReleaseImage != "" {
		cmd.Env = append(cmd.Env, "OPENSHIFT_INSTALL_RELEASE_IMAGE_OVERRIDE="+opts.ReleaseImage)
	}
	var last lastLines
	logf := func(line string) {
		last.add(line)
		if opts.Log != nil {
			opts.Log(line)
		}
	}
	if err := runStreaming(cmd, logf); err != nil {
		return nil, fmt.Errorf("openshift-install agent create image: %w\n%s", err, last.String())
	}
	isoPath, err := findISO(dir)
	if err != nil {
		return nil, err
	}
	sum, size, err := sha256File(isoPath)
	if err != nil {
		return nil, err
	}
	return &BuildResult{ISO: isoPath, SHA256: sum, Size: size, InstallerPath: opts.Installer, InstallerVersion: version,
		ReleaseImage: opts.ReleaseImage, Inputs: opts.Rendered.Digests(), Installer: opts.Info}, nil
}

// removeAllRetry removes dir, trying again for a few seconds while something still writes into
// it (a child of a killed run finishing: "directory not empty").
func removeAllRetry(dir string) error {
	b := poll.Backoff{Tries: 30, Initial: 100 * time.Millisecond, Max: 100 * time.Millisecond}
	return poll.Retry(context.Background(), b, func(error) bool { return true }, func(context.Context) error { return os.RemoveAll(dir) })
}

func withoutEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return out
}

// runStreaming runs cmd, handing each output line to log as soon as it is written.
func runStreaming(cmd *exec.Cmd, log func(string)) error {
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			log(sc.Text())
		}
		io.Copy(io.Discard, pr)
	}()
	err := cmd.Run()
	pw.Close()
	wg.Wait()
	return err
}

func findISO(dir string) (string, error) {
	matches, _ := filepath.Glob(filepath.Join(dir, "agent.*.iso"))
	if len(matches) != 1 {
		return "", fmt.Errorf("openshift-install finished but %s holds %d agent.*.iso files, want 1", dir, len(matches))
	}
	return matches[0], nil
}

// sha256File hashes an ISO or installer binary (streamed; gigabytes).
func sha256File(path string) (string, int64, error) {
	sum, n, err := filehash.SHA256(path)
	if err != nil {
		return "", 0, fmt.Errorf("hash ISO: %w", err)
	}
	return sum, n, nil
}

// lastLines keeps the installer's last lines for the error message.
type lastLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *lastLines) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, s)
	if len(l.lines) > 10 {
		l.lines = l.lines[1:]
	}
}

func (l *lastLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
