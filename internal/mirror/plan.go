package mirror

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/types/descriptor"
	"github.com/regclient/regclient/types/manifest"
	"github.com/regclient/regclient/types/ref"
)

// PlannedImage is one image with what the plan learned about it from the source.
type PlannedImage struct {
	Image
	Digest    string `json:"digest"`
	MediaType string `json:"mediaType"`
	// Size is the bytes of the image's manifests and blobs (shared blobs counted in every image).
	Size      int64 `json:"size"`
	Manifests int   `json:"manifests"`
	Blobs     int   `json:"blobs"`
	// Present is true when the destination already holds the image's manifest.
	Present bool `json:"present"`
	// FilteredPlatforms is how many children of a multi-arch index the platform filter left out
	// (the index is still pushed whole: a sparse index); FilteredBytes is the size of their
	// manifests and of the blobs only they use: what copying them adds when the destination
	// refuses sparse indexes.
	FilteredPlatforms int    `json:"filteredPlatforms,omitempty"`
	FilteredBytes     int64  `json:"filteredBytes,omitempty"`
	Error             string `json:"error,omitempty"`
}

// PlanResult is what a mirror would do, computed read-only.
type PlanResult struct {
	Images []PlannedImage `json:"images"`
	// UniqueBlobs and UniqueBytes count each blob once however many images share it.
	UniqueBlobs int   `json:"uniqueBlobs"`
	UniqueBytes int64 `json:"uniqueBytes"`
	// TotalBytes counts blobs once per image: what image-by-image copying would move.
	TotalBytes int64 `json:"totalBytes"`
	// SavedBytes is TotalBytes - UniqueBytes: what deduplication saves.
	SavedBytes int64 `json:"savedBytes"`
	// PresentBytes is the size of unique blobs of images already complete at the destination.
	PresentBytes int64 `json:"presentBytes"`
	// ToCopyBytes is the size of unique blobs of images not yet complete: the transfer still needed
	// (and the disk a to-dir run needs).
	ToCopyBytes int64 `json:"toCopyBytes"`
	// FilteredPlatforms counts the index children the platform filter left out, over all images.
	FilteredPlatforms int `json:"filteredPlatforms,omitempty"`
	// SparseFallbackBytes is what the copy adds, beyond ToCopyBytes, when the destination refuses
	// sparse indexes and the left-out children are copied too: the unique blobs only they use, of
	// images not yet at the destination (blob bytes, like ToCopyBytes).
	SparseFallbackBytes int64 `json:"sparseFallbackBytes,omitempty"`
}

// planned is an image with its manifest tree, ready to copy.
type planned struct {
	Image
	src, dst  ref.Ref // read reference (override applied) and destination, both with digest
	dstTag    string  // tag to push the root under, if the source was a tag
	digest    string
	mediaType string
	manifests []manifest.Manifest // children first, root last
	blobs     []descriptor.Descriptor
	size      int64
	present   bool
	signed    bool                    // a cosign sha256-<hex>.sig tag exists at the source
	referrers []descriptor.Descriptor // OCI referrers of the root manifest at the source
	err       error

	// The children the platform filter left out (manifests children first, with their blobs not
	// already in blobs, and their size): copied only when the destination refuses a sparse index.
	skipped          []manifest.Manifest
	skippedBlobs     []descriptor.Descriptor
	skippedSize      int64
	skippedPlatforms int
	skippedDigests   []string // every left-out child, read or not: what a refusing registry names
	skippedErr       error    // reading a left-out child failed (an archive holds only the kept ones)
	// full is set once the left-out children were added to manifests and blobs.
	full bool
}

// expand adds the left-out children to the image (before the root, which stays last): the whole
// index is copied, as for a registry that refuses sparse indexes.
func (p *planned) expand() {
	if p.full || len(p.skipped) == 0 {
		return
	}
	p.full = true
	n := len(p.manifests)
	ms := make([]manifest.Manifest, 0, n+len(p.skipped))
	ms = append(ms, p.manifests[:n-1]...)
	ms = append(ms, p.skipped...)
	p.manifests = append(ms, p.manifests[n-1])
	p.blobs = append(p.blobs, p.skippedBlobs...)
	p.size += p.skippedSize
}

// Plan reads every image's manifests from the source (never a layer) and checks the destination
// with HEAD requests, returning the blob set, sizes and what is already there.
func Plan(ctx context.Context, images []Image, o Options) (*PlanResult, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.withRun()
	rc, err := newClient(o, hostsOf(images)...)
	if err != nil {
		return nil, err
	}
	ps := resolveWithSignatures(ctx, rc, dedupImages(images), o, true)
	return summarize(ps), nil
}

func summarize(ps []*planned) *PlanResult {
	res := &PlanResult{}
	seen := map[string]bool{}
	seenTodo := map[string]bool{}
	for _, p := range ps {
		pi := PlannedImage{Image: p.Image, Digest: p.digest, MediaType: p.mediaType, Size: p.size,
			Manifests: len(p.manifests), Blobs: len(p.blobs), Present: p.present,
			FilteredPlatforms: p.skippedPlatforms, FilteredBytes: p.skippedSize}
		res.FilteredPlatforms += p.skippedPlatforms
		if p.err != nil {
			pi.Error = p.err.Error()
		}
		res.Images = append(res.Images, pi)
		for _, b := range p.blobs {
			res.TotalBytes += b.Size
			k := string(b.Digest)
			if !seen[k] {
				seen[k] = true
				res.UniqueBlobs++
				res.UniqueBytes += b.Size
			}
			if !p.present && !seenTodo[k] {
				seenTodo[k] = true
				res.ToCopyBytes += b.Size
			}
		}
	}
	seenFallback := map[string]bool{}
	for _, p := range ps {
		if p.present {
			continue
		}
		for _, b := range p.skippedBlobs {
			if k := string(b.Digest); !seenTodo[k] && !seenFallback[k] {
				seenFallback[k] = true
				res.SparseFallbackBytes += b.Size
			}
		}
	}
	res.SavedBytes = res.TotalBytes - res.UniqueBytes
	res.PresentBytes = res.UniqueBytes - res.ToCopyBytes
	return res
}

// resolveStream resolves images like resolveWithSignatures, handing each one to emit as soon as
// it is resolved (its signature and referrers right after it), and returns them all in
// resolveWithSignatures' order: the images, then the signatures and referrers.
func resolveStream(ctx context.Context, rc *regclient.RegClient, images []Image, o Options, emit func(*planned)) []*planned {
	out := make([]*planned, len(images))
	extra := make([][]*planned, len(images))
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]bool{} // signature and referrer images already taken (two tags, one digest)
	for i, im := range images {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			sctx := withSlot(ctx, sem)
			p := &planned{Image: im}
			p.err = resolveOne(sctx, rc, p, o, false)
			out[i] = p
			emit(p)
			for _, s := range attached(p) {
				mu.Lock()
				dup := seen[s.Source+" "+s.Dest]
				seen[s.Source+" "+s.Dest] = true
				mu.Unlock()
				if dup {
					continue
				}
				sp := &planned{Image: s}
				sp.err = resolveOne(sctx, rc, sp, o, false)
				extra[i] = append(extra[i], sp)
				emit(sp)
			}
		}()
	}
	wg.Wait()
	for _, x := range extra {
		out = append(out, x...)
	}
	return out
}

// attached are the cosign signature tag and the OCI referrers found for a resolved image, as
// images to mirror into the same repository.
func attached(p *planned) []Image {
	if p.err != nil || (!p.signed && len(p.referrers) == 0) {
		return nil
	}
	sr, err1 := ref.New(p.Source)
	dr, err2 := ref.New(p.Dest)
	if err1 != nil || err2 != nil {
		return nil
	}
	var out []Image
	if p.signed {
		out = append(out, Image{Source: sr.SetTag(sigTag(p.digest)).CommonName(), Dest: dr.SetTag(sigTag(p.digest)).CommonName(),
			Kind: KindSignature, Origin: p.Source})
	}
	for _, d := range p.referrers {
		out = append(out, Image{Source: sr.SetDigest(d.Digest.String()).CommonName(), Dest: dr.SetDigest(d.Digest.String()).CommonName(),
			Kind: KindReferrer, Origin: p.Source})
	}
	return out
}

// resolveWithSignatures resolves images and then the cosign signature tags and the OCI referrers
// (signatures, SBOMs, attestations of the root manifest) found for them, so that they travel with
// the image they describe: the same repository, the same tag name or digest. The plan lists them
// as images of kind signature and referrer.
func resolveWithSignatures(ctx context.Context, rc *regclient.RegClient, images []Image, o Options, full bool) []*planned {
	ps := resolveAll(ctx, rc, images, o, full)
	var sigs []Image
	for _, p := range ps {
		if p.err != nil || (!p.signed && len(p.referrers) == 0) {
			continue
		}
		sr, err1 := ref.New(p.Source)
		dr, err2 := ref.New(p.Dest)
		if err1 != nil || err2 != nil {
			continue
		}
		if p.signed {
			sigs = append(sigs, Image{Source: sr.SetTag(sigTag(p.digest)).CommonName(), Dest: dr.SetTag(sigTag(p.digest)).CommonName(),
				Kind: KindSignature, Origin: p.Source})
		}
		for _, d := range p.referrers {
			sigs = append(sigs, Image{Source: sr.SetDigest(d.Digest.String()).CommonName(), Dest: dr.SetDigest(d.Digest.String()).CommonName(),
				Kind: KindReferrer, Origin: p.Source})
		}
	}
	if len(sigs) == 0 {
		return ps
	}
	return append(ps, resolveAll(ctx, rc, dedupImages(sigs), o, full)...)
}

func sigTag(dig string) string { return strings.Replace(dig, ":", "-", 1) + ".sig" }

// resolveAll resolves images in parallel, keeping their order. With full set, images already
// present at the destination still get their manifest tree read (for the plan's sizes).
func resolveAll(ctx context.Context, rc *regclient.RegClient, images []Image, o Options, full bool) []*planned {
	out := make([]*planned, len(images))
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	for i, im := range images {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			p := &planned{Image: im}
			p.err = resolveOne(withSlot(ctx, sem), rc, p, o, full) // each request retries on its own
			out[i] = p
		}()
	}
	wg.Wait()
	return out
}

// resolveOne finds the image's digest, checks the destination, and unless the image is present
// (and full is false) reads its manifest tree.
func resolveOne(ctx context.Context, rc *regclient.RegClient, p *planned, o Options, full bool) error {
	src, err := sourceRef(p.Image, o)
	if err != nil {
		return err
	}
	dst, err := destRef(p.Dest, o)
	if err != nil {
		return err
	}
	if src.Digest == "" {
		m, err := manifestHead(ctx, rc, o, src, regclient.WithManifestRequireDigest())
		if err != nil {
			return fmt.Errorf("source %s: %w", p.Source, err)
		}
		p.digest = m.GetDescriptor().Digest.String()
	} else {
		p.digest = src.Digest
	}
	if dst.Digest == "" && dst.Scheme != "ocidir" {
		p.dstTag = dst.Tag
	}
	p.src, p.dst = src.SetDigest(p.digest), dst.SetDigest(p.digest)
	if o.Signatures && p.Kind != KindSignature && p.Kind != KindReferrer && o.SourceDir == "" {
		// cosign stores a signature as the tag sha256-<hex>.sig in the image's repository
		if _, err := manifestHead(ctx, rc, o, src.SetTag(sigTag(p.digest))); err == nil {
			p.signed = true
		}
		// OCI referrers: the referrers API, or the sha256-<hex> index tag where there is none
		// (regclient tries the API once per repository and remembers the answer)
		err := o.retry(ctx, []string{src.Registry}, func(ctx context.Context) error {
			rl, err := rc.ReferrerList(ctx, p.src)
			if err != nil {
				return err
			}
			p.referrers = rl.Descriptors
			return nil
		})
		if err != nil && Temporary(err) {
			return fmt.Errorf("source %s: referrers: %w", p.Source, err)
		}
	}
	// The destination holds the image when its tag (or digest) resolves to the source digest.
	// A registry accepts a manifest only after its blobs and children, so this one HEAD proves
	// the whole tree (the second, nothing-to-do run costs one or two HEADs per image).
	check := dst
	if dst.Scheme == "ocidir" {
		check = p.dst // a layout holds manifests by digest only
	}
	if dm, err := manifestHead(ctx, rc, o, check, regclient.WithManifestRequireDigest()); err == nil &&
		dm.GetDescriptor().Digest.String() == p.digest {
		p.present = true
		if !full {
			return nil
		}
	}
	return readTree(ctx, rc, p, o)
}
