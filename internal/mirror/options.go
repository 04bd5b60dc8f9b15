package mirror

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/regclient/regclient/types/platform"

	"github.com/bootstrap-dev/bootstrap/internal/redact"
)

// Dest names where a mirror goes, the one name of the destination from the command's argument
// (docker://HOST[:PORT][/NAMESPACE] or file://DIR, ParseDest) and the site's registry down to the
// copy engine: a registry (Host, the Namespace images go under, reached with Insecure, CAFile and
// AuthFile as an Endpoint is) or, with Dir, a directory: the OCI layout of a disk mirror, one
// content-addressed blob store for every image, manifests by digest, so a later run writes only
// what earlier runs did not.
type Dest struct {
	Host      string
	Namespace string
	Insecure  bool
	CAFile    string
	AuthFile  string
	Dir       string
}

// Endpoint is how to reach the destination registry.
func (d Dest) Endpoint() Endpoint {
	return Endpoint{Host: d.Host, Insecure: d.Insecure, CAFile: d.CAFile, AuthFile: d.AuthFile}
}

// String is the destination as oc-mirror v2 writes it: file://DIR or docker://HOST[/NAMESPACE].
func (d Dest) String() string {
	if d.Dir != "" {
		return "file://" + d.Dir
	}
	if d.Namespace != "" {
		return "docker://" + d.Host + "/" + d.Namespace
	}
	return "docker://" + d.Host
}

// ParseDest reads a destination as oc-mirror v2 takes it: docker://HOST[:PORT][/NAMESPACE] (a
// registry) or file://DIR (a disk mirror). TLS, trust and credentials are set on the result.
func ParseDest(s string) (Dest, error) {
	if d, ok := strings.CutPrefix(s, "file://"); ok && d != "" {
		return Dest{Dir: d}, nil
	}
	if hostNS, ok := strings.CutPrefix(s, "docker://"); ok && hostNS != "" {
		host, ns, _ := strings.Cut(hostNS, "/")
		return Dest{Host: host, Namespace: ns}, nil
	}
	return Dest{}, fmt.Errorf("destination %q: want docker://HOST[:PORT][/NAMESPACE] or file://DIR", s)
}

// Endpoint says how to reach a registry: TLS, trust and credentials.
type Endpoint struct {
	// Host is host[:port]. For sources it may be empty: the settings then apply to every source host.
	Host string
	// Insecure skips TLS verification and, when the registry does not speak TLS, allows plain HTTP
	// (the meaning of skopeo's and oc-mirror's --tls-verify=false).
	Insecure bool
	// CAFile is a PEM bundle trusted in addition to the system roots.
	CAFile string
	// AuthFile is a containers auth file ({"auths": {"host": {"auth": "base64(user:pass)"}}}).
	// It is read when the client is built; only its path is ever recorded.
	AuthFile string
}

// Progress is a snapshot of a copy. Counters only grow within one Copy call.
type Progress struct {
	BytesDone   int64 // bytes of blobs transferred, mounted or found present
	BytesTotal  int64 // bytes of the unique blobs of the images still to copy
	BytesPulled int64 // bytes actually read from the source
	ImagesDone  int   // images whose manifests are at the destination
	ImagesTotal int
	// BlobsDone and BlobsTotal count blobs per destination repository (copied, mounted or found
	// present). Largest blobs go first, so images complete late in a run; this moves throughout.
	BlobsDone, BlobsTotal int
	Failed                int // images that failed after retries
	Elapsed               time.Duration
}

// ProgressFunc receives progress snapshots. It is called from one goroutine at a time, at most every
// Options.ProgressInterval and once at the end; it must return quickly.
type ProgressFunc func(Progress)

// ImageDoneFunc is called once per image that reached the destination (or was already there), from
// any goroutine; the stage adapter journals it as a step. It must be safe for concurrent use.
type ImageDoneFunc func(ImageResult)

// Options configure a Copy, Plan or Verify: where from and to, how hard to try, what to keep;
// the callbacks are its Observer, the state of a run its runState. The zero value is not valid:
// use DefaultOptions.
type Options struct {
	Source Endpoint
	// Dest is the registry, or with Dest.Dir the directory, the images go to.
	Dest Dest
	// SourceDir, when set, reads every image from the OCI layout a Dest.Dir run wrote (the
	// disconnected half); images must carry their digest (Image.Pinned).
	SourceDir string
	// SourceRegistry, when set, replaces the registry host of every source reference when reading
	// (a proxy or lab registry standing in for quay.io); mirror sets keep the original names.
	SourceRegistry string
	// Parallel bounds concurrent blob and manifest transfers.
	Parallel int
	// RepoLog, when set, is a file in the work dir listing the destination repositories that a
	// run has written to. Blobs bound for a repository the registry does not know (its tag list
	// answers 404) and that no run wrote to are uploaded without an existence check first (one
	// request less per blob on a fresh mirror); every other blob is checked with a HEAD. The file
	// holds only repository names; written before a run's first write to a repository, it keeps a
	// run killed before its first manifest from passing the repository off as new next time.
	RepoLog string
	// BlobLog, when set, is a file in the work dir recording each blob the destination confirmed
	// (repository and digest, appended in fsync'd batches as blobs land); a later run neither checks
	// nor copies those again, so a run killed late resumes at the cost of what is missing. See
	// blobLog for why that is sound; a run that is not interrupted removes it (see Copy).
	BlobLog string
	// Platforms to keep from multi-arch indexes ("linux/amd64"); empty, or the single word "all",
	// keeps all. A filtered index keeps its original bytes (its digest must not change), so the
	// destination receives a sparse index: where the registry refuses one (distribution's default,
	// Quay without FEATURE_SPARSE_INDEX) the copy falls back to every platform for that registry
	// (see Result.SparseRefused).
	Platforms []string
	// Signatures mirrors cosign-style sha256-<digest>.sig tags with the images they sign.
	Signatures bool
	// Retries is how many times an operation that failed with a temporary error is tried again.
	Retries int
	// RetryBase is the first backoff delay; each retry doubles it (with jitter) up to RetryMax.
	RetryBase, RetryMax time.Duration
	// ProgressInterval bounds how often Progress is called.
	ProgressInterval time.Duration
	// Log receives debug records (never secrets); nil discards them.
	Log *slog.Logger

	// Observer holds the callbacks: what the caller hears, no configuration.
	Observer
	// runState is what one run's operations share; never set by callers.
	runState
}

// Observer is what a caller hears of a run. Each callback is optional.
type Observer struct {
	// Progress receives progress snapshots (see ProgressFunc).
	Progress ProgressFunc
	// ImageDone hears every image that reached the destination (see ImageDoneFunc).
	ImageDone ImageDoneFunc
	// DiskCheck, when set and Dest.Dir is set, is called once the copy is planned and before
	// anything is written, with the bytes of blobs the layout does not hold yet; an error ends
	// the copy before it starts (a disk that cannot hold the mirror fails first, not at 90 %).
	DiskCheck func(dir string, need int64) error
}

// runState is the state every operation of one run shares, set by withRun.
type runState struct {
	// circuits are the per-host circuit breakers of one run (see retry.go).
	circuits *circuits
	// scrub redacts the run's registry credentials from a registry's error text before it is
	// clipped (peertext.go); set by withRun.
	scrub *redact.Scrubber
}

// withRun returns the options with the per-run state every operation of one Copy, Plan,
// Resolve or Verify shares (the host circuits), keeping state that is already there.
func (o Options) withRun() Options {
	if o.circuits == nil {
		o.circuits = newCircuits(o.RetryMax)
	}
	if o.scrub == nil {
		o.scrub = peerScrubber(o)
	}
	return o
}

// DefaultParallel is the default number of concurrent blob and manifest transfers. On the 2-core
// benchmark host (bench/mirror.sh, 3 GiB, 60 images) 12 was about 4 % faster than 6 and 24 no
// faster than 12: with largest-first scheduling the big layers start at once and the small ones
// fill the gaps, and beyond that the registries' hashing and disk writes are the limit. Memory is
// per transfer a fixed small buffer (46 MB peak RSS at 12).
const DefaultParallel = 12

// DefaultOptions returns options with sane defaults for dest.
func DefaultOptions(dest Dest) Options {
	return Options{
		Dest:             dest,
		Parallel:         DefaultParallel,
		Signatures:       true,
		Retries:          3,
		RetryBase:        500 * time.Millisecond,
		RetryMax:         15 * time.Second,
		ProgressInterval: time.Second,
	}
}

// Validate reports options that cannot work.
func (o Options) Validate() error {
	if o.Dest.Host == "" && o.Dest.Dir == "" {
		return fmt.Errorf("destination registry host is empty")
	}
	if o.Dest.Dir != "" && o.SourceDir != "" {
		return fmt.Errorf("a disk mirror goes to a directory or from one, not both")
	}
	if o.Parallel < 1 || o.Parallel > 64 {
		return fmt.Errorf("parallel must be between 1 and 64, got %d", o.Parallel)
	}
	for _, p := range o.Platforms {
		if p == PlatformsAll {
			if len(o.Platforms) > 1 {
				return fmt.Errorf("platforms: %q keeps every platform and cannot be combined with others, got %v", PlatformsAll, o.Platforms)
			}
			continue
		}
		if _, err := platform.Parse(p); err != nil || !strings.Contains(p, "/") {
			return fmt.Errorf("platforms: %q is not a platform: write os/arch (linux/amd64) or %q", p, PlatformsAll)
		}
	}
	if o.Retries < 0 {
		return fmt.Errorf("retries must not be negative, got %d", o.Retries)
	}
	return nil
}

// PlatformsAll, as the only entry of Options.Platforms, keeps every platform of multi-arch indexes.
const PlatformsAll = "all"

// AllPlatforms reports whether platforms keeps every platform: empty, or just "all".
func AllPlatforms(platforms []string) bool {
	return len(platforms) == 0 || (len(platforms) == 1 && platforms[0] == PlatformsAll)
}

func (o Options) logger() *slog.Logger {
	if o.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Log
}
