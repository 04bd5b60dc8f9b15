package agentiso

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var versionRE = regexp.MustCompile(`\b(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?\b`)

// InstallerVersion extracts the release version from `openshift-install version` output
// ("openshift-install 4.16.3\nbuilt from commit ...\nrelease image ...").
func InstallerVersion(output string) (string, error) {
	for _, line := range strings.Split(output, "\n") {
		if strings.HasPrefix(line, "openshift-install ") {
			if m := versionRE.FindString(line); m != "" {
				return m, nil
			}
		}
	}
	return "", fmt.Errorf("no version in openshift-install output %q", firstLine(output))
}

// CheckInstallerVersion reports an error when openshift-install was built for another release
// than the one the profile installs: a 4.16 installer silently writes a 4.16 ISO for a 4.17 payload.
func CheckInstallerVersion(release, installer string) error {
	if release == "" {
		return nil
	}
	if release != installer {
		return fmt.Errorf("openshift-install is version %s but cluster.release.version is %s: use the installer of the same release "+
			"(extracted from the mirrored release payload, or set cluster.installer.path)", installer, release)
	}
	return nil
}

// InstallerReleaseImage extracts the release image from `openshift-install version` output
// ("release image quay.io/openshift-release-dev/ocp-release@sha256:..."); "" when absent.
func InstallerReleaseImage(output string) string {
	for _, line := range strings.Split(output, "\n") {
		if img, ok := strings.CutPrefix(strings.TrimSpace(line), "release image "); ok {
			return strings.TrimSpace(img)
		}
	}
	return ""
}

// CheckInstallerRelease reports an error when the installer names a release image by digest
// that is not the mirrored release: an installer extracted from (or stamped for) another payload,
// a respin of the same version, say. The mirror keeps digests, so the two must be equal. An
// installer that names its release by tag (a development build) cannot be checked here.
func CheckInstallerRelease(release, installer string) error {
	_, want, ok1 := strings.Cut(release, "@")
	_, got, ok2 := strings.Cut(installer, "@")
	if !ok1 || !ok2 || want == got {
		return nil
	}
	return fmt.Errorf("openshift-install was made for release image %s but the mirrored release is %s (%s): use the "+
		"installer of this release (leave cluster.installer.path empty to extract it from the mirrored payload)", installer, want, release)
}

// releaseBefore reports whether version (4.y.z) is older than major.minor; unknown versions are not.
func releaseBefore(version string, major, minor int) bool {
	m := versionRE.FindStringSubmatch(version)
	if m == nil {
		parts := strings.SplitN(version, ".", 3)
		if len(parts) < 2 {
			return false
		}
		m = []string{"", parts[0], parts[1]}
	}
	a, err1 := strconv.Atoi(m[1])
	b, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil {
		return false
	}
	return a < major || (a == major && b < minor)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
