package mirror

import (
	"context"
	"fmt"
	"sync"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/types/manifest"
	"github.com/regclient/regclient/types/ref"
)

// Missing is one thing Verify did not find at the destination.
type Missing struct {
	Source string `json:"source"`
	Dest   string `json:"dest"`
	// What is "manifest", "blob sha256:..." or "advertised by catalog NAME".
	What  string `json:"what"`
	Error string `json:"error,omitempty"`
}

// VerifyResult is the completeness proof.
type VerifyResult struct {
	Images    int       `json:"images"`
	Manifests int       `json:"manifests"`
	Blobs     int       `json:"blobs"`
	Missing   []Missing `json:"missing,omitempty"`
}

// Verify proves, read-only, that every image in c (manifest tree and blobs) exists at the
// destination, and that every image a mirrored catalog advertises resolves there through the
// source→destination mapping of c. Images recorded as failed are reported missing too.
func Verify(ctx context.Context, c Content, o Options) (*VerifyResult, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.withRun()
	rc, err := newClient(o)
	if err != nil {
		return nil, err
	}
	res := &VerifyResult{}
	var mu sync.Mutex
	miss := func(m Missing) { mu.Lock(); res.Missing = append(res.Missing, m); mu.Unlock() }
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	byDigest := map[string]bool{} // source repo@digest present in content
	for _, im := range c.Images {
		if im.Error != "" || im.Digest == "" {
			miss(Missing{Source: im.Source, Dest: im.Dest, What: "manifest", Error: im.Error})
			continue
		}
		if sr, err := ref.New(im.Source); err == nil {
			byDigest[sr.Registry+"/"+sr.Repository+"@"+im.Digest] = true
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			m, b, err := verifyImage(withSlot(ctx, sem), rc, o, im, miss)
			mu.Lock()
			res.Images++
			res.Manifests += m
			res.Blobs += b
			mu.Unlock()
			if err != nil {
				miss(Missing{Source: im.Source, Dest: im.Dest, What: "manifest", Error: err.Error()})
			}
		}()
	}
	wg.Wait()
	for _, cat := range c.Catalogs {
		for _, a := range cat.Advertised {
			if !byDigest[a] {
				miss(Missing{Source: a, What: "advertised by catalog " + cat.Name})
			}
		}
	}
	return res, nil
}

// verifyImage walks one image's tree at the destination: manifests by GET (they are small),
// blobs by HEAD.
func verifyImage(ctx context.Context, rc *regclient.RegClient, o Options, im ImageResult, miss func(Missing)) (int, int, error) {
	dr, err := ref.New(im.Dest)
	if err != nil {
		return 0, 0, err
	}
	dr = dr.SetDigest(im.Digest)
	nm, nb := 0, 0
	var walk func(r ref.Ref, depth int) error
	walk = func(r ref.Ref, depth int) error {
		m, err := manifestGet(ctx, rc, o, r)
		if err != nil {
			return err
		}
		nm++
		if depth > 3 {
			return fmt.Errorf("index nesting deeper than 3")
		}
		if ix, ok := m.(manifest.Indexer); ok {
			list, err := ix.GetManifestList()
			if err != nil {
				return err
			}
			for _, d := range list {
				if !im.SparseRefused && !wantPlatform(d.Platform, o.Platforms) {
					// a platform-filtered (sparse) index lacks the left-out children by design;
					// where the registry refused it, they were copied and are checked like the rest
					continue
				}
				if err := walk(r.SetDigest(d.Digest.String()), depth+1); err != nil {
					miss(Missing{Source: im.Source, Dest: im.Dest, What: "manifest " + d.Digest.String(), Error: err.Error()})
				}
			}
			return nil
		}
		if imgr, ok := m.(manifest.Imager); ok {
			cfg, _ := imgr.GetConfig()
			layers, _ := imgr.GetLayers()
			for _, d := range append(layers, cfg) {
				nb++
				err := o.retry(ctx, []string{r.Registry}, func(ctx context.Context) error {
					_, err := rc.BlobHead(ctx, r, d)
					return err
				})
				if err != nil {
					miss(Missing{Source: im.Source, Dest: im.Dest, What: "blob " + d.Digest.String(), Error: err.Error()})
				}
			}
		}
		return nil
	}
	return nm, nb, walk(dr, 0)
}
