package upgrade

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
)

// The layout of a carried graph directory (what the mirror writes beside its content.json):
//
//	content.json                       optional: graph entries {path, sha256, size} and images
//	cincinnati/<channel>-<arch>.json   the update service's graph of one channel and architecture
//	graph-data/version                 the cincinnati-graph-data layout
//	graph-data/channels/*.yaml
//	graph-data/blocked-edges/*.yaml
//	catalogs/<major.minor>/<name>/     file-based catalogs, per OpenShift minor, as CatalogSource name
const (
	GraphDir    = "cincinnati"
	DataDir     = "graph-data"
	CatalogsDir = "catalogs"
	ContentFile = "content.json"
)

// graphFile is a graph file's name: the channel and the architecture.
var graphFile = regexp.MustCompile(`^((?:stable|fast|candidate|eus)-\d+\.\d+)-(amd64|arm64|ppc64le|s390x|multi)\.json$`)

// ContentEntry is a graph file as content.json records it.
type ContentEntry struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// content is the part of content.json this package reads: the graph entries and which images
// (by digest) were carried.
type content struct {
	Graph  []ContentEntry `json:"graph"`
	Images []struct {
		Source string `json:"source"`
		Digest string `json:"digest"`
	} `json:"images"`
}

// Carried is a loaded carried graph directory.
type Carried struct {
	Dir string
	// Graphs are the channel graphs for the architecture asked, by channel.
	Graphs map[string]*Graph
	// Data is the graph-data, nil when not carried.
	Data *GraphData
	// Verified is true when content.json listed every graph file read and each hashed to it.
	Verified bool
	// Images are the digests and source references content.json records as carried; nil without
	// a content.json.
	Images map[string]bool
	// Catalogs maps an OpenShift minor to its catalogs directory (relative to Dir).
	Catalogs map[string]string
}

// Load reads a carried graph directory for one architecture (amd64, arm64, ppc64le, s390x,
// multi). With a content.json that has graph entries, every file read must be listed and hash
// to its entry, and every listed file must be there: a truncated or tampered carry is refused.
func Load(dir, arch string) (*Carried, error) {
	root, err := fsroot.Open(dir)
	if err != nil {
		return nil, refuse(ReasonGraph, dir, "pass --graph the directory the mirror carried the update graph into", "%v", err)
	}
	defer root.Close()
	c := &Carried{Dir: dir, Graphs: map[string]*Graph{}, Catalogs: map[string]string{}}
	var listed map[string]ContentEntry
	if b, err := root.ReadFile(ContentFile, maxGraphBytes); err == nil {
		var ct content
		if err := json.Unmarshal(b, &ct); err != nil {
			return nil, refuse(ReasonHash, filepath.Join(dir, ContentFile), "carry content.json again with the graph", "not readable: %v", err)
		}
		c.Images = map[string]bool{}
		for _, im := range ct.Images {
			if im.Digest != "" {
				c.Images[im.Digest] = true
			}
			c.Images[im.Source] = true
			if _, d, ok := strings.Cut(im.Source, "@"); ok {
				c.Images[d] = true
			}
		}
		if len(ct.Graph) > 0 {
			listed = map[string]ContentEntry{}
			for _, e := range ct.Graph {
				listed[e.Path] = e
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, refuse(ReasonHash, filepath.Join(dir, ContentFile), "", "%v", err)
	}
	read := func(rel string, limit int64) ([]byte, error) {
		b, err := root.ReadFile(rel, limit)
		if err != nil {
			return nil, refuse(ReasonGraph, filepath.Join(dir, rel), carryAgain("carry the graph again", rel), "%v", err)
		}
		if listed == nil {
			return b, nil
		}
		e, ok := listed[rel]
		if !ok {
			return nil, refuse(ReasonHash, filepath.Join(dir, rel), carryAgain("remove the file, or carry the graph again with its content.json", rel), "not listed in content.json's graph entries")
		}
		delete(listed, rel)
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != e.SHA256 || int64(len(b)) != e.Size {
			return nil, refuse(ReasonHash, filepath.Join(dir, rel), carryAgain("the file was truncated or changed after the mirror wrote it: carry the graph again", rel),
				"%d bytes hashing to sha256:%s; content.json says %d bytes, sha256:%s", len(b), got, e.Size, e.SHA256)
		}
		return b, nil
	}
	names, _ := readDir(dir, GraphDir)
	for _, n := range names {
		m := graphFile.FindStringSubmatch(n)
		if m == nil || m[2] != arch {
			continue
		}
		rel := path.Join(GraphDir, n)
		b, err := read(rel, maxGraphBytes)
		if err != nil {
			return nil, err
		}
		g, err := ParseGraph(filepath.Join(dir, rel), b)
		if err != nil {
			return nil, err
		}
		c.Graphs[m[1]] = g
	}
	if len(c.Graphs) == 0 {
		return nil, refuse(ReasonGraph, filepath.Join(dir, GraphDir), "add a channel (stable-4.NN) for each minor of the path to the ImageSetConfiguration's mirror.platform.channels, with graph: true, and mirror again (--update-url URL):\n  mirror:\n    platform:\n      graph: true\n      architectures: ["+arch+"]\n      channels:\n      - name: stable-4.NN",
			"no graph for architecture %s (files named <channel>-%s.json)", arch, arch)
	}
	if c.Data, err = loadData(dir, read); err != nil {
		return nil, err
	}
	if listed != nil {
		for rel := range listed {
			// listed and not read: a file of another architecture is fine, a missing one is not
			if _, err := root.Lstat(rel); err != nil {
				return nil, refuse(ReasonHash, filepath.Join(dir, rel), carryAgain("the directory lost files on the way: carry the graph again", rel),
					"listed in content.json and missing")
			}
		}
		c.Verified = true
	}
	minors, _ := readDir(dir, CatalogsDir)
	for _, m := range minors {
		if minorRE.MatchString(m) {
			c.Catalogs[m] = path.Join(CatalogsDir, m)
		}
	}
	return c, nil
}

// carryAgain is a remedy for a carried graph file that cannot be used: why, then the
// ImageSetConfiguration lines that fetch it again (the channel and architecture of a graph
// file; graph: true for the graph-data) and how to carry it.
func carryAgain(why, rel string) string {
	lines := "  mirror:\n    platform:\n      graph: true"
	if m := graphFile.FindStringSubmatch(path.Base(filepath.ToSlash(rel))); m != nil {
		lines += "\n      architectures: [" + m[2] + "]\n      channels:\n      - name: " + m[1]
	}
	return why + "; these ImageSetConfiguration lines bring it (bootstrap mirror --update-url URL), and content.json travels with it:\n" + lines
}

var minorRE = regexp.MustCompile(`^\d+\.\d+$`)

// loadData reads the graph-data layout, nil when it was not carried.
func loadData(dir string, read func(string, int64) ([]byte, error)) (*GraphData, error) {
	if _, err := os.Stat(filepath.Join(dir, DataDir)); err != nil {
		return nil, nil
	}
	d := &GraphData{Channels: map[string][]string{}}
	b, err := read(path.Join(DataDir, "version"), 64)
	if err != nil {
		return nil, err
	}
	d.Version = strings.TrimSpace(string(b))
	chans, _ := readDir(dir, path.Join(DataDir, "channels"))
	for _, n := range chans {
		if !strings.HasSuffix(n, ".yaml") {
			continue
		}
		rel := path.Join(DataDir, "channels", n)
		b, err := read(rel, maxDataFile)
		if err != nil {
			return nil, err
		}
		ch, err := parseChannel(filepath.Join(dir, rel), b)
		if err != nil {
			return nil, err
		}
		d.Channels[ch.Name] = ch.Versions
	}
	blocked, _ := readDir(dir, path.Join(DataDir, "blocked-edges"))
	for _, n := range blocked {
		if !strings.HasSuffix(n, ".yaml") {
			continue
		}
		rel := path.Join(DataDir, "blocked-edges", n)
		b, err := read(rel, maxDataFile)
		if err != nil {
			return nil, err
		}
		e, err := parseBlocked(filepath.Join(dir, rel), b)
		if err != nil {
			return nil, err
		}
		e.File = rel
		d.Blocked = append(d.Blocked, e)
	}
	return d, nil
}

// maxDirEntries bounds a directory listing of the carried tree.
const maxDirEntries = 20000

// readDir lists the regular files and directories of dir/rel, sorted (os.ReadDir sorts).
func readDir(dir, rel string) ([]string, error) {
	es, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	if len(es) > maxDirEntries {
		return nil, refuse(ReasonGraph, filepath.Join(dir, rel), "", "%d entries, more than a carried graph has", len(es))
	}
	var names []string
	for _, e := range es {
		if e.Type().IsRegular() || e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}
