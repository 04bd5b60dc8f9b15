package mirror

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/units"
)

// Sparse indexes. With a platform filter, an index is pushed with its original bytes (pull specs,
// IDMS and signatures name its digest) but only the children of the kept platforms are copied: the
// destination gets a sparse index. Quay with FEATURE_SPARSE_INDEX and distribution configured with
// validation.manifests.indexes.platforms: list accept it; distribution's default, Debian's
// docker-registry and Quay without the feature refuse it (400 MANIFEST_BLOB_UNKNOWN naming a
// left-out child). The copy then falls back: the left-out children are copied through the same
// engine (dedup, verification, retries), the index is pushed again, and the host is remembered for
// the rest of the run so that later indexes go straight to a full copy.

// manifestPushError is a failed manifest push; root says it was the image's root manifest.
type manifestPushError struct {
	digest string
	root   bool
	err    error
}

func (e *manifestPushError) Error() string { return e.err.Error() }
func (e *manifestPushError) Unwrap() error { return e.err }

// errSparseRefused stands for the refusal of an index that was not pushed because its registry
// refused another sparse index earlier in the run.
var errSparseRefused = errors.New("the registry refused a sparse index earlier in this run")

// sparseState is what a destination host answered to a sparse index, as far as this run knows.
type sparseState int

const (
	sparseUnknown sparseState = iota
	sparseAccepted
	sparseRefused
)

// sparseTurn returns the host's known answer to sparse indexes or, while it is unknown, makes the
// caller the one push that finds out: the others wait for its verdict (without holding a worker
// slot, which the probing push may need for a retry), so a refusing registry costs one refused
// push per run, not one per index in flight. A caller given sparseUnknown and a done func must call
// done with what its push showed (sparseUnknown when it failed for another reason).
func (e *engine) sparseTurn(ctx context.Context, host string) (sparseState, func(sparseState)) {
	for {
		e.mu.Lock()
		switch {
		case e.refused[host]:
			e.mu.Unlock()
			return sparseRefused, nil
		case e.accepted[host]:
			e.mu.Unlock()
			return sparseAccepted, nil
		}
		ch := e.probes[host]
		if ch == nil {
			ch = make(chan struct{})
			e.probes[host] = ch
			e.mu.Unlock()
			return sparseUnknown, func(v sparseState) {
				e.mu.Lock()
				switch v {
				case sparseAccepted:
					e.accepted[host] = true
				case sparseRefused:
					e.refused[host] = true
				}
				delete(e.probes, host)
				e.mu.Unlock()
				close(ch)
			}
		}
		e.mu.Unlock()
		slots := slotFrom(ctx)
		if slots != nil {
			<-slots
		}
		select {
		case <-ch:
		case <-ctx.Done():
		}
		if slots != nil {
			slots <- struct{}{}
		}
		if ctx.Err() != nil {
			return sparseUnknown, nil
		}
	}
}

var digestRE = regexp.MustCompile(`sha256:[0-9a-f]{64}`)

// missingContent reports whether a manifest push was refused because something it references is
// not in the repository: distribution's MANIFEST_BLOB_UNKNOWN, or the wording other registries use.
func missingContent(err error) bool {
	if err == nil {
		return false
	}
	s := err.Error()
	for _, w := range []string{"MANIFEST_BLOB_UNKNOWN", "BLOB_UNKNOWN", "MANIFEST_UNKNOWN", "blob unknown", "manifest unknown"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// sparseRefusal reports whether err is the destination refusing p's platform-filtered index: the
// root push failed for missing content and, when the registry names what is missing, it is a
// left-out child (a kept child that is missing is another failure, not a sparse refusal).
func sparseRefusal(err error, p *planned) bool {
	var pe *manifestPushError
	if !errors.As(err, &pe) || !pe.root {
		return false
	}
	if errors.Is(err, errSparseRefused) {
		return true
	}
	if !missingContent(err) {
		return false
	}
	skipped := map[string]bool{}
	for _, d := range p.skippedDigests {
		skipped[d] = true
	}
	for _, b := range p.skippedBlobs {
		skipped[string(b.Digest)] = true
	}
	named := false
	for _, d := range digestRE.FindAllString(err.Error(), -1) {
		if d == pe.digest || d == p.digest {
			continue // the index itself, named by our message
		}
		if skipped[d] {
			return true
		}
		named = true
	}
	return !named
}

func (e *engine) isRefused(host string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.refused[host]
}

// sparseFallback handles a failed push of p's manifests: when the destination refused the sparse
// index, it remembers the host, adds the left-out children to the image and schedules it again
// (their blobs become tasks like any other), and returns true. The image is then finished by the
// new job. Otherwise it returns the error to record for the image.
func (e *engine) sparseFallback(p *planned, err error) (bool, error) {
	if p.full || p.skippedPlatforms == 0 || !sparseRefusal(err, p) {
		return false, err
	}
	host := p.dst.Registry
	e.mu.Lock()
	e.refused[host] = true // the push's verdict said so already, unless the host was accepting before
	e.mu.Unlock()
	if !errors.Is(err, errSparseRefused) {
		e.o.logger().Warn("destination refused a sparse index; copying every platform of multi-arch images to it",
			"host", host, "image", p.Source, "err", err)
	}
	if p.skippedErr != nil {
		return false, noFallbackError(p)
	}
	p.expand()
	// a new goroutine: add may wait for a worker slot, and the caller holds one
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		e.add(p, e.start, e.finishAsync)
	}()
	return true, nil
}

func noFallbackError(p *planned) error {
	return fmt.Errorf("registry %s refuses platform-filtered (sparse) indexes and the left-out platforms cannot be read from the source: %w; "+
		"write the disk mirror with every platform (mirror.platforms: [all], or no --platform), or enable sparse manifests on the registry", p.dst.Registry, p.skippedErr)
}

// sparseWarnings says once per refusing host what the fallback cost and how to avoid it.
func sparseWarnings(res *Result, platforms []string) []string {
	type agg struct {
		images, platforms int
		bytes             int64
	}
	by := map[string]*agg{}
	for _, h := range res.SparseRefused {
		by[h] = &agg{}
	}
	for _, im := range res.Images {
		if !im.SparseRefused {
			continue
		}
		r, err := destRef(im.Dest, Options{})
		if err != nil {
			continue
		}
		a := by[r.Registry]
		if a == nil {
			a = &agg{}
			by[r.Registry] = a
		}
		a.images++
		a.platforms += im.ExtraPlatforms
		a.bytes += im.ExtraBytes
	}
	hosts := make([]string, 0, len(by))
	for h := range by {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	var out []string
	for _, h := range hosts {
		a := by[h]
		out = append(out, fmt.Sprintf("registry %s refuses platform-filtered (sparse) indexes: copied every platform of %d multi-arch image(s) "+
			"instead of only %s (%d more platform images, %s more, counted per image). To copy only the wanted platforms, enable sparse "+
			"manifests on the registry (Quay: FEATURE_SPARSE_INDEX; distribution 3: validation.manifests.indexes.platforms: list; distribution 2.x, e.g. Debian's docker-registry, cannot); "+
			"to copy every platform without the refused push, set mirror.platforms: [all] (bootstrap mirror: no --platform)",
			h, a.images, strings.Join(platforms, ", "), a.platforms, units.Bytes(a.bytes)))
	}
	return out
}
