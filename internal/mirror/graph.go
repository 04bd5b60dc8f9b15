package mirror

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
)

// The carried update graph. The connected side fetches, for every channel the ISC names and every
// architecture it mirrors, the Cincinnati graph JSON from the update service (the URL oc-mirror
// v2 queries, cincinnati.OcpUpdateURL, or the one the job names, like its UPDATE_URL_OVERRIDE),
// writes it as cincinnati/<channel>-<arch>.json beside content.json and records each file with
// its SHA-256 and size in content.json's "graph" entries, the layout internal/upgrade loads
// (upgrade.Load: a file not listed, or not hashing to its entry, is refused). The disconnected
// side hashes every file again before it carries it on, so a truncated or altered carry stops there.

// DefaultUpdateURL is the public update service's graph endpoint (?channel=&arch=).
const DefaultUpdateURL = "https://api.openshift.com/api/upgrades_info/v1/graph"

// GraphDir and GraphDataDir are where the channel graphs and the graph-data are carried,
// relative to content.json (upgrade.GraphDir, upgrade.DataDir).
const (
	GraphDir     = "cincinnati"
	GraphDataDir = "graph-data"
)

// MaxGraphBytes bounds one fetched or carried graph file: the public graph of a channel is a few
// MiB; the bound matches what internal/upgrade reads.
const MaxGraphBytes = 64 << 20

// GraphEntry is a carried graph file as content.json records it (upgrade.ContentEntry).
type GraphEntry struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// graphChannel is a channel name that is also a safe file name.
var graphChannel = regexp.MustCompile(`^(?:stable|fast|candidate|eus)-\d+\.\d+$`)

// graphArchs are the architectures the update service knows, as oc-mirror names them.
var graphArchs = map[string]bool{"amd64": true, "arm64": true, "ppc64le": true, "s390x": true, "multi": true}

// GraphRequests lists the (channel, arch) graphs an ISC names, sorted: each platform channel for
// each architecture (amd64 when none is written).
func GraphRequests(isc *ImageSetConfig) [][2]string {
	archs := isc.Mirror.Platform.Architectures
	if len(archs) == 0 {
		archs = []string{"amd64"}
	}
	var out [][2]string
	seen := map[[2]string]bool{}
	for _, ch := range isc.Mirror.Platform.Channels {
		for _, a := range archs {
			k := [2]string{ch.Name, a}
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0]+" "+out[i][1] < out[j][0]+" "+out[j][1] })
	return out
}

// FetchGraphs fetches the graph of every channel and architecture the ISC names from updateURL
// into dir/cincinnati, each checked (bounded, strict JSON in the update service's format) before
// it is written, and returns their content.json entries. hc nil is http.DefaultClient.
func FetchGraphs(ctx context.Context, hc *http.Client, updateURL string, isc *ImageSetConfig, dir string) ([]GraphEntry, error) {
	if hc == nil {
		hc = defaultHTTP
	}
	base, err := url.Parse(updateURL)
	if err != nil || base.Scheme != "http" && base.Scheme != "https" || base.Host == "" {
		return nil, fmt.Errorf("update service %q: not an http(s) URL; give the graph endpoint (%s, or your OSUS route's /api/upgrades_info/v1/graph)", updateURL, DefaultUpdateURL)
	}
	reqs := GraphRequests(isc)
	if len(reqs) == 0 {
		return nil, fmt.Errorf("%s: no channel to fetch the update graph for; list the channels under mirror.platform.channels", isc.At("mirror.platform.channels"))
	}
	var out []GraphEntry
	for _, r := range reqs {
		ch, arch := r[0], r[1]
		if !graphChannel.MatchString(ch) || !graphArchs[arch] {
			return nil, fmt.Errorf("%s: channel %q, architecture %q: the update service has no graph under that name; name a channel stable-4.NN, fast-, candidate- or eus-", isc.At("mirror.platform.channels"), ch, arch)
		}
		u := *base
		q := u.Query()
		q.Set("channel", ch)
		q.Set("arch", arch)
		u.RawQuery = q.Encode()
		b, err := getBounded(ctx, hc, u.String(), "application/json", MaxGraphBytes)
		if err != nil {
			return nil, fmt.Errorf("update graph %s %s: %w; check the update service URL, or mirror without the graph", ch, arch, err)
		}
		rel := path.Join(GraphDir, ch+"-"+arch+".json")
		if err := CheckGraphJSON(b); err != nil {
			return nil, fmt.Errorf("update graph %s from %s: %w", rel, u.Redacted(), err)
		}
		e, err := writeGraphFile(dir, rel, b)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// getBounded GETs u and returns its body, refusing a status other than 200 and a body over limit.
func getBounded(ctx context.Context, hc *http.Client, u, accept string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", req.URL.Redacted(), resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", req.URL.Redacted(), err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("GET %s: more than %d bytes, larger than any real answer", req.URL.Redacted(), limit)
	}
	return b, nil
}

// wireGraph is the update service's graph as the CVO parses it (pkg/cincinnati), for a strict
// check only: internal/upgrade reads it for planning.
type wireGraph struct {
	Nodes []struct {
		Version  string            `json:"version"`
		Payload  string            `json:"payload"`
		Metadata map[string]string `json:"metadata"`
	} `json:"nodes"`
	Edges            [][2]int `json:"edges"`
	ConditionalEdges []struct {
		Edges []struct {
			From string `json:"from"`
			To   string `json:"to"`
		} `json:"edges"`
		Risks []struct {
			URL           string `json:"url"`
			Name          string `json:"name"`
			Message       string `json:"message"`
			MatchingRules []struct {
				Type   string `json:"type"`
				PromQL *struct {
					PromQL string `json:"promql"`
				} `json:"promql"`
			} `json:"matchingRules"`
		} `json:"risks"`
	} `json:"conditionalEdges"`
}

// CheckGraphJSON checks a graph file strictly: one JSON document of the update service's
// fields only, every node with a version and a payload, every edge's indexes in range.
func CheckGraphJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var g wireGraph
	if err := dec.Decode(&g); err != nil {
		return fmt.Errorf("not an update graph: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("not an update graph: data after the JSON document")
	}
	if len(g.Nodes) == 0 {
		return errors.New("not an update graph: no nodes")
	}
	for i, n := range g.Nodes {
		if n.Version == "" || n.Payload == "" {
			return fmt.Errorf("not an update graph: nodes[%d] without version or payload", i)
		}
	}
	for i, e := range g.Edges {
		if e[0] < 0 || e[1] < 0 || e[0] >= len(g.Nodes) || e[1] >= len(g.Nodes) {
			return fmt.Errorf("not an update graph: edges[%d] %v points outside the %d nodes", i, e, len(g.Nodes))
		}
	}
	return nil
}

// writeGraphFile writes b at dir/rel (rel slash-separated, inside dir) and returns its entry.
func writeGraphFile(dir, rel string, b []byte) (GraphEntry, error) {
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return GraphEntry{}, err
	}
	if err := writeFile(p, b); err != nil {
		return GraphEntry{}, err
	}
	sum := sha256.Sum256(b)
	return GraphEntry{Path: rel, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(b))}, nil
}

// CarryGraph verifies every graph file content.json lists in from (size and SHA-256, the graph
// JSON strictly again) and writes it into to, returning the entries for to's content.json. A
// file missing, truncated or altered, or an entry naming a path outside the graph directories,
// is refused by name: nothing is written then.
func CarryGraph(from, to string, entries []GraphEntry) ([]GraphEntry, error) {
	files, err := readGraphFiles(from, entries)
	if err != nil || len(files) == 0 {
		return nil, err
	}
	out := make([]GraphEntry, len(entries))
	for i, e := range entries {
		if out[i], err = writeGraphFile(to, e.Path, files[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// VerifyGraph checks the graph files content.json lists in dir as CarryGraph does (--verify).
func VerifyGraph(dir string, entries []GraphEntry) error {
	_, err := readGraphFiles(dir, entries)
	return err
}

// readGraphFiles reads and checks every listed graph file of dir (see CarryGraph).
func readGraphFiles(from string, entries []GraphEntry) ([][]byte, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	root, err := fsroot.Open(from)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	files := make([][]byte, len(entries))
	for i, e := range entries {
		if !carriedGraphPath(e.Path) {
			return nil, fmt.Errorf("%s: content.json lists graph file %q, outside %s/ and %s/; the disk mirror was not written by bootstrap mirror: carry it again", from, e.Path, GraphDir, GraphDataDir)
		}
		if e.Size < 0 || e.Size > MaxGraphBytes {
			return nil, fmt.Errorf("%s: graph file %s: content.json says %d bytes, more than a graph file can be", from, e.Path, e.Size)
		}
		b, err := root.ReadFile(e.Path, MaxGraphBytes)
		if err != nil {
			return nil, fmt.Errorf("%s: graph file %s listed in content.json: %w; carry the disk mirror again", from, e.Path, err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != e.SHA256 || int64(len(b)) != e.Size {
			return nil, fmt.Errorf("%s: graph file %s is %d bytes hashing to sha256:%s; content.json says %d bytes, sha256:%s: it was truncated or changed on the way, carry the disk mirror again",
				from, e.Path, len(b), got, e.Size, e.SHA256)
		}
		if strings.HasPrefix(e.Path, GraphDir+"/") {
			if err := CheckGraphJSON(b); err != nil {
				return nil, fmt.Errorf("%s: graph file %s: %w", from, e.Path, err)
			}
		}
		files[i] = b
	}
	return files, nil
}

// carriedGraphPath reports whether rel is a graph file's place: cincinnati/<channel>-<arch>.json
// or a clean relative path under graph-data/.
func carriedGraphPath(rel string) bool {
	if rel != path.Clean(rel) || path.IsAbs(rel) || strings.Contains(rel, "\\") {
		return false
	}
	if name, ok := strings.CutPrefix(rel, GraphDir+"/"); ok {
		ch, arch, ok := cutLast(strings.TrimSuffix(name, ".json"), "-")
		return ok && strings.HasSuffix(name, ".json") && graphChannel.MatchString(ch) && graphArchs[arch]
	}
	rest, ok := strings.CutPrefix(rel, GraphDataDir+"/")
	return ok && rest != "" && !strings.HasPrefix(rest, "../") && !strings.Contains("/"+rest+"/", "/../")
}

func cutLast(s, sep string) (string, string, bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// defaultHTTP fetches the graph when the job names no client.
var defaultHTTP = http.DefaultClient

// graph fetches (connected side) or carries on (FromDir) the update graph of a run into
// rep.Content.Graph; with graph: true it also builds the graph-data image, returned to be
// recorded with the images. Nothing when the job asks for no graph.
func (l *Loaded) graph(ctx context.Context, o Options, rep *Report) ([]ImageResult, error) {
	var err error
	if l.Job.FromDir != "" {
		rep.Content.Graph, err = CarryGraph(o.SourceDir, l.Job.OutDir, l.Archive.Graph)
		return nil, err
	}
	if l.Job.ISC == nil {
		return nil, nil
	}
	withData := l.Job.ISC.Mirror.Platform.Graph
	u := l.Job.UpdateURL
	if u == "" && withData && len(l.Job.ISC.Mirror.Platform.Channels) > 0 {
		u = DefaultUpdateURL
	}
	if u == "" && !withData {
		return nil, nil
	}
	dir := l.Job.OutDir
	if l.Dest.Dir != "" {
		dir = l.Dest.Dir
		if l.Job.ArchiveBytes > 0 {
			dir = filepath.Dir(ArchiveContent(l.Dest.Dir)) // packed beside content.json (finishDisk)
		}
	}
	if u != "" {
		if rep.Content.Graph, err = FetchGraphs(ctx, l.Job.HTTP, u, l.Job.ISC, dir); err != nil {
			return nil, err
		}
	}
	if !withData {
		return nil, nil
	}
	es, im, err := l.graphData(ctx, o, dir)
	if err != nil {
		return nil, err
	}
	rep.Content.Graph = append(rep.Content.Graph, es...)
	return []ImageResult{im}, nil
}
