package mirror

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/regclient/regclient"
)

// Release channels without the update graph.
//
// oc-mirror resolves mirror.platform.channels through Cincinnati, the OpenShift update service:
// the channel's releases and the upgrade edges between them. There is no update service on an
// air-gapped site and none is needed here: the release repository's tags name every release,
// "4.16.3-x86_64", "4.16.3-multi", "4.17.0-rc.1-aarch64". A channel is resolved from them:
//
//   - the channel name "stable-4.16" (also fast-, candidate-, eus-) gives the minor, 4.16; only
//     tags of that minor and of the wanted architecture are considered, sorted by semantic version;
//     pre-releases (rc, ec) are kept only for candidate channels;
//   - neither minVersion nor maxVersion (and full false): the channel head, the highest release
//     of that minor (what oc-mirror mirrors for a channel without versions);
//   - minVersion and/or maxVersion: every release in [minVersion, maxVersion]; a missing bound is
//     the channel's lowest or highest release (oc-mirror's rule for a missing bound);
//   - full: every release of the minor (within the bounds, when given).
//
// Differences from oc-mirror: a channel here holds only its own minor (Cincinnati's stable-4.16
// also lists the 4.15 releases that upgrade into it: list a stable-4.15 channel for those), a
// release pulled from a channel but still tagged is still mirrored, and shortestPath, which needs
// the graph's edges, is refused by name (a min..max range mirrors a superset of any path).

// channelName is a release channel: stable-4.16, fast-4.16, candidate-4.16, eus-4.16.
var channelName = regexp.MustCompile(`^(stable|fast|candidate|eus)-(\d+)\.(\d+)$`)

// releaseTag is a release repository tag: VERSION-ARCH.
var releaseTag = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.]+)?-(x86_64|aarch64|ppc64le|s390x|multi)$`)

// channelMinor parses a channel name into its kind and "major.minor".
func channelMinor(name string) (kind, minor string, ok bool) {
	m := channelName.FindStringSubmatch(name)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2] + "." + m[3], true
}

// versionMinor returns "major.minor" of a version ("4.16.3" -> "4.16").
func versionMinor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return ""
	}
	return parts[0] + "." + parts[1]
}

// validVersion reports whether v is X.Y.Z with an optional pre-release.
func validVersion(v string) bool {
	return releaseTag.MatchString(v + "-x86_64")
}

// ChannelVersions selects, from the tags of a release repository, the release versions a channel
// entry asks for on one architecture (the tag suffix: x86_64, aarch64, ppc64le, s390x, multi),
// in ascending order. See the rules above.
func ChannelVersions(ch ISCChannel, archSuffix string, tags []string) ([]string, error) {
	kind, minor, ok := channelMinor(ch.Name)
	if !ok {
		return nil, fmt.Errorf("channel %q: want stable-X.Y, fast-X.Y, candidate-X.Y or eus-X.Y", ch.Name)
	}
	var all []string
	for _, t := range tags {
		m := releaseTag.FindStringSubmatch(t)
		if m == nil || m[5] != archSuffix || m[1]+"."+m[2] != minor {
			continue
		}
		if m[4] != "" && kind != "candidate" {
			continue
		}
		all = append(all, strings.TrimSuffix(t, "-"+archSuffix))
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("channel %s: the release repository has no %s release tagged %s.*-%s", ch.Name, minor, minor, archSuffix)
	}
	sort.Slice(all, func(i, j int) bool { return compareVersions(all[i], all[j]) < 0 })
	if ch.MinVersion == "" && ch.MaxVersion == "" && !ch.Full {
		return all[len(all)-1:], nil // the channel head
	}
	lo, hi := ch.MinVersion, ch.MaxVersion
	if lo == "" {
		lo = all[0]
	}
	if hi == "" {
		hi = all[len(all)-1]
	}
	var out []string
	for _, v := range all {
		if compareVersions(v, lo) >= 0 && compareVersions(v, hi) <= 0 {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("channel %s: no %s release between %s and %s (the repository has %s .. %s)",
			ch.Name, archSuffix, lo, hi, all[0], all[len(all)-1])
	}
	return out, nil
}

// channelReleases lists the release repository's tags (through the source registry override)
// and returns the release images a channel entry selects for one architecture.
func channelReleases(ctx context.Context, rc *regclient.RegClient, ch ISCChannel, arch string, o Options) ([]string, error) {
	suffix, ok := releaseArch(arch)
	if !ok {
		return nil, fmt.Errorf("architecture %q", arch)
	}
	r, err := readRef(DefaultReleaseRepo, o.SourceRegistry)
	if err != nil {
		return nil, err
	}
	var tags []string
	err = o.retry(ctx, []string{r.Registry}, func(ctx context.Context) error {
		tl, err := rc.TagList(ctx, r)
		if err != nil {
			return err
		}
		tags, err = tl.GetTags()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("channel %s: list the tags of %s: %w", ch.Name, DefaultReleaseRepo, err)
	}
	vs, err := ChannelVersions(ch, suffix, tags)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, DefaultReleaseRepo+":"+v+"-"+suffix)
	}
	return out, nil
}

// validateChannel checks one channel entry without the registry, returning every problem.
func validateChannel(i int, ch ISCChannel) []string {
	var errs []string
	add := func(f string, a ...any) {
		errs = append(errs, fmt.Sprintf("mirror.platform.channels[%d]", i)+fmt.Sprintf(f, a...))
	}
	if ch.Type != "" && ch.Type != "ocp" {
		add(".type: %q is not supported (only ocp)", ch.Type)
	}
	if ch.ShortestPath {
		add(".shortestPath: not supported: the shortest upgrade path needs the update graph (Cincinnati), which an air-gapped run does not have; remove it (minVersion..maxVersion mirrors every release in between, a superset of the path)")
	}
	_, minor, ok := channelMinor(ch.Name)
	if ch.Name == "" {
		add(".name: required (stable-4.16, say)")
	} else if !ok {
		add(".name: %q is not a release channel; want stable-X.Y, fast-X.Y, candidate-X.Y or eus-X.Y", ch.Name)
	}
	for _, b := range []struct{ field, v string }{{"minVersion", ch.MinVersion}, {"maxVersion", ch.MaxVersion}} {
		if b.v == "" {
			continue
		}
		if !validVersion(b.v) {
			add(".%s: %q is not a release version (4.16.3)", b.field, b.v)
			continue
		}
		if ok && versionMinor(b.v) != minor {
			add(".%s: %s is not a %s release; a channel holds its own minor here (no update graph): list a channel of %s-%s for it",
				b.field, b.v, minor, strings.Split(ch.Name, "-")[0], versionMinor(b.v))
		}
	}
	if ch.MinVersion != "" && ch.MaxVersion != "" && validVersion(ch.MinVersion) && validVersion(ch.MaxVersion) &&
		compareVersions(ch.MinVersion, ch.MaxVersion) > 0 {
		add(": minVersion %s is above maxVersion %s", ch.MinVersion, ch.MaxVersion)
	}
	return errs
}
