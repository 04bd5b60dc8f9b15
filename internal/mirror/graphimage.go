package mirror

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/types/manifest"
	"github.com/regclient/regclient/types/ref"
)

// The graph-data image and the UpdateService of an ISC with graph: true, as oc-mirror v2 builds
// them (read from openshift/oc-mirror v2: internal/pkg/release/graph.go CreateGraphImage and
// const.go; internal/pkg/clusterresources/clusterresources.go UpdateServiceGenerator and const.go;
// the UpdateService type is cincinnati-operator's api/v1): the graph-data tarball of the update
// service, laid as one layer under /var/lib/cincinnati-graph-data on top of UBI 9, with the command
// that copies it into the volume the update service reads (/var/lib/cincinnati/graph-data), pushed
// as openshift/graph-image:latest; and an UpdateService "update-service-oc-mirror" in namespace
// openshift-update-service with replicas 2, releases the mirrored release repository and
// graphDataImage the graph image. Unlike oc-mirror, graphDataImage names the image by digest, the
// one content.json records and --verify checks. The tarball's version, channels/ and
// blocked-edges/ are also carried as files under graph-data/ for `bootstrap upgrade plan`.

// Defaults of the graph-data image (oc-mirror v2's graphURL, graphBaseImage, graphImageName).
const (
	DefaultGraphDataURL   = "https://api.openshift.com/api/upgrades_info/graph-data"
	DefaultGraphBaseImage = "registry.access.redhat.com/ubi9/ubi:latest"
	GraphImageRepo        = "openshift/graph-image"
	// KindGraph is the graph-data image: built here, named by no mirror set.
	KindGraph Kind = "graph-data"
	// UpdateServiceFile is the UpdateService manifest written with the outputs of a registry run.
	UpdateServiceFile = "updateService.yaml"

	graphDataInImage   = "var/lib/cincinnati-graph-data"
	graphDataMount     = "/var/lib/cincinnati/graph-data"
	maxGraphDataBytes  = 64 << 20 // the tarball, and all its files uncompressed
	maxGraphDataFiles  = 20000
	graphImageSourceID = GraphImageRepo + ":latest"
)

// ReadGraphData reads a graph-data tarball (gzip'd tar) strictly: regular files and directories
// only, names clean and relative, at most maxGraphDataFiles files and maxGraphDataBytes in all.
// It returns the files by slash-separated name (a leading "./" dropped).
func ReadGraphData(r io.Reader) (map[string][]byte, error) {
	zr, err := gzip.NewReader(io.LimitReader(r, maxGraphDataBytes+1))
	if err != nil {
		return nil, fmt.Errorf("graph-data: not a gzip'd tarball: %w", err)
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("graph-data: %w", err)
		}
		name := strings.TrimPrefix(h.Name, "./")
		if name == "" || name == "." {
			continue
		}
		clean := path.Clean(name)
		if path.IsAbs(name) || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(name, "\\") {
			return nil, fmt.Errorf("graph-data: entry %q leaves the tarball's root", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		default:
			return nil, fmt.Errorf("graph-data: entry %q is not a regular file or directory (type %q)", h.Name, h.Typeflag)
		}
		total += h.Size
		if h.Size < 0 || total > maxGraphDataBytes || len(files) >= maxGraphDataFiles {
			return nil, fmt.Errorf("graph-data: more than %d files or %d bytes, larger than the real graph-data", maxGraphDataFiles, maxGraphDataBytes)
		}
		b, err := io.ReadAll(io.LimitReader(tr, h.Size+1))
		if err != nil || int64(len(b)) != h.Size {
			return nil, fmt.Errorf("graph-data: entry %q truncated", h.Name)
		}
		if _, dup := files[clean]; dup {
			return nil, fmt.Errorf("graph-data: entry %q twice", h.Name)
		}
		files[clean] = b
	}
	if _, ok := files["version"]; !ok {
		return nil, errors.New("graph-data: no version file; this is not the update service's graph-data tarball")
	}
	return files, nil
}

// plannedGraphData is whether a graph-data file is one upgrade plan reads (carried as a file).
func plannedGraphData(name string) bool {
	return name == "version" || path.Dir(name) == "channels" && strings.HasSuffix(name, ".yaml") ||
		path.Dir(name) == "blocked-edges" && strings.HasSuffix(name, ".yaml")
}

// GraphDataURLFor is where the graph-data tarball is fetched: graphDataURL when set; else beside
// an update service's graph endpoint (…/api/upgrades_info/v1/graph → …/api/upgrades_info/graph-data,
// the layout of api.openshift.com), so one --update-url names both; else DefaultGraphDataURL.
func GraphDataURLFor(updateURL, graphDataURL string) string {
	if graphDataURL != "" {
		return graphDataURL
	}
	if base, ok := strings.CutSuffix(updateURL, "/v1/graph"); ok && base != "" {
		return base + "/graph-data"
	}
	return DefaultGraphDataURL
}

// graphData fetches the graph-data tarball, writes the files upgrade plan reads under
// dir/graph-data and pushes the graph-data image to dest; it returns their entries and the image.
func (l *Loaded) graphData(ctx context.Context, o Options, dir string) ([]GraphEntry, ImageResult, error) {
	u := GraphDataURLFor(l.Job.UpdateURL, l.Job.GraphDataURL)
	hc := l.Job.HTTP
	if hc == nil {
		hc = defaultHTTP
	}
	b, err := getBounded(ctx, hc, u, "application/gzip", maxGraphDataBytes)
	if err != nil {
		return nil, ImageResult{}, fmt.Errorf("graph-data %s: %w; check the graph-data URL, or remove graph: true", u, err)
	}
	files, err := ReadGraphData(bytes.NewReader(b))
	if err != nil {
		return nil, ImageResult{}, err
	}
	var es []GraphEntry
	for _, n := range sortedKeys(files) {
		if plannedGraphData(n) {
			e, err := writeGraphFile(dir, GraphDataDir+"/"+n, files[n])
			if err != nil {
				return nil, ImageResult{}, err
			}
			es = append(es, e)
		}
	}
	base := l.Job.GraphBaseImage
	if base == "" {
		base = DefaultGraphBaseImage
	}
	host, ns := l.Dest.Host, l.Dest.Namespace
	if l.Dest.Dir != "" {
		host, ns = ArchiveHost, ""
	}
	dest, err := DestFor(graphImageSourceID, host, ns)
	if err != nil {
		return nil, ImageResult{}, err
	}
	rc, err := newClient(o.withRun(), hostsOf([]Image{{Source: base}})...)
	if err != nil {
		return nil, ImageResult{}, err
	}
	im, err := pushGraphImage(ctx, rc, base, dest, files, o.withRun())
	if err != nil {
		return nil, ImageResult{}, fmt.Errorf("graph-data image on %s: %w", base, err)
	}
	return es, im, nil
}

// pushGraphImage builds the graph-data image on base (its layers and config, plus one layer
// holding files under graphDataInImage and the command copying them to graphDataMount) and
// pushes it to dest (or into the disk mirror's layout).
func pushGraphImage(ctx context.Context, rc *regclient.RegClient, base, dest string, files map[string][]byte, o Options) (ImageResult, error) {
	src, err := readRef(base, o.SourceRegistry)
	if err != nil {
		return ImageResult{}, err
	}
	img, cfg, err := baseImage(ctx, rc, src, "linux/amd64", o)
	if err != nil {
		return ImageResult{}, err
	}
	entries := map[string][]byte{}
	for n, b := range files {
		entries[graphDataInImage+"/"+n] = b
	}
	layer, diffID, err := tarGz(entries)
	if err != nil {
		return ImageResult{}, err
	}
	cc, _ := cfg["config"].(map[string]any)
	if cc == nil {
		cc = map[string]any{}
		cfg["config"] = cc
	}
	cc["Cmd"] = []any{"/bin/bash", "-c", "exec cp -rp /" + graphDataInImage + "/* " + graphDataMount}
	dst, err := ref.New(dest)
	if err != nil {
		return ImageResult{}, err
	}
	layers, _ := img.GetLayers()
	dgst, size, err := appendLayer(ctx, rc, src, dst, layers, layer, diffID, cfg, "bootstrap mirror: update service graph-data", o)
	if err != nil {
		return ImageResult{}, err
	}
	return ImageResult{Image: Image{Source: graphImageSourceID, Dest: dest, Kind: KindGraph, Origin: base},
		Digest: dgst, Size: size}, nil
}

// WriteUpdateService writes updateService.yaml into dir when the images hold a graph-data image
// (see the top of this file), naming it and the mirrored release repository by their destinations.
func WriteUpdateService(dir string, images []ImageResult, host, namespace string) (string, error) {
	var graph, releases string
	for _, im := range images {
		switch {
		case im.Kind == KindGraph && im.Digest != "" && im.Error == "":
			graph = repoOnly(im.Dest) + "@" + im.Digest
		case im.Kind == KindRelease && releases == "" && im.Error == "":
			releases = repoOnly(im.Dest)
		}
	}
	if graph == "" {
		return "", nil
	}
	if releases == "" {
		d, err := DestFor(DefaultReleaseRepo, host, namespace)
		if err != nil {
			return "", err
		}
		releases = repoOnly(d)
	}
	us := map[string]any{
		"apiVersion": "updateservice.operator.openshift.io/v1",
		"kind":       "UpdateService",
		"metadata":   map[string]any{"name": "update-service-oc-mirror", "namespace": "openshift-update-service"},
		"spec":       map[string]any{"replicas": 2, "releases": releases, "graphDataImage": graph},
	}
	return UpdateServiceFile, writeYAMLDocs(filepath.Join(dir, UpdateServiceFile), us)
}

// baseImage reads the image src names for platform (retried as every source read is) and its
// config, decoded: what an image built on top of it (a filtered catalog, the graph-data image)
// starts from. The config is read up to 4 MiB.
func baseImage(ctx context.Context, rc *regclient.RegClient, src ref.Ref, platform string, o Options) (manifest.Imager, map[string]any, error) {
	var (
		img    manifest.Imager
		rawCfg []byte
	)
	err := o.retry(ctx, []string{src.Registry}, func(ctx context.Context) error {
		m, err := platformImage(ctx, rc, src, platform)
		if err != nil {
			return err
		}
		var ok bool
		if img, ok = m.(manifest.Imager); !ok {
			return fmt.Errorf("%s is not an image", src.CommonName())
		}
		cfgDesc, err := img.GetConfig()
		if err != nil {
			return err
		}
		br, err := rc.BlobGet(ctx, src, cfgDesc)
		if err != nil {
			return err
		}
		defer br.Close()
		rawCfg, err = io.ReadAll(io.LimitReader(br, 4<<20))
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	var cfg map[string]any
	if err := json.Unmarshal(rawCfg, &cfg); err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	return img, cfg, nil
}
