package harness

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/config"
	"github.com/regclient/regclient/types/ref"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// Updates is the update service and the release signature store a connected site reads
// (api.openshift.com and mirror.openshift.com on the internet), over the lab's releases:
//
//	GET /api/upgrades_info/v1/graph?channel=C&arch=amd64   the Cincinnati graph of a channel
//	GET /api/upgrades_info/graph-data                      the graph-data tarball
//	GET /signatures/sha256=<hex>/signature-N               release signatures (OpenPGP)
//
// At start it reads each release payload's release-metadata from the source registry and draws
// the edges from their previous lists, as Cincinnati does; graph-data's blocked edges then remove
// an edge (no rules) or make it conditional (a PromQL rule). Each release digest is signed with a
// throwaway OpenPGP key made at the lab dir's first start (kept for later starts), its public key
// written to ReleaseKeyFile, in the "atomic
// container signature" form the cluster-version operator verifies. Plain HTTP on loopback.
type Updates struct {
	// Source is the seeded source registry the payloads are read from (started before).
	Source *Source
	srv    *http.Server
	addr   string
	// Digests maps each lab release version to its payload digest.
	Digests map[string]string
	graphs  map[string][]byte
	tarball []byte
	sigs    map[string][]byte
}

// ReleaseKeyFile (armored OpenPGP public key) and CosignPubFile (PEM) are the throwaway keys'
// public halves, under the lab dir.
const (
	ReleaseKeyFile = "updates/release-key.asc"
	CosignPubFile  = "updates/cosign.pub"
	// releaseKeyPrivate keeps the throwaway OpenPGP key across starts of one lab dir (0600).
	releaseKeyPrivate = "updates/release-key.private"
)

// Name implements Component.
func (*Updates) Name() string { return "updates" }

// Start implements Component.
func (u *Updates) Start(ctx context.Context, l *Lab) error {
	if u.Source == nil || u.Source.Addr() == "" {
		return errors.New("updates: the source registry is not started")
	}
	meta, err := u.readPayloads(ctx, filepath.Join(l.Dir, CAFile))
	if err != nil {
		return fmt.Errorf("updates: %w", err)
	}
	if u.graphs, err = Graphs(u.Digests, meta); err != nil {
		return err
	}
	if u.tarball, err = GraphDataTarball(); err != nil {
		return err
	}
	signer, err := LoadReleaseSigner(filepath.Join(l.Dir, releaseKeyPrivate))
	if err != nil {
		return err
	}
	u.sigs = map[string][]byte{}
	for v, d := range u.Digests {
		if u.sigs[d], err = signer.Sign(ReleaseImage(v), d); err != nil {
			return err
		}
	}
	if err := signer.WritePublic(filepath.Join(l.Dir, ReleaseKeyFile), filepath.Join(l.Dir, CosignPubFile)); err != nil {
		return err
	}
	srv, err := startOnPort(l, "updates", 64, func(addr string) (*listening, error) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, err
		}
		return &listening{ln}, nil
	})
	if err != nil {
		return err
	}
	u.addr = srv.Addr()
	u.srv = &http.Server{Handler: u.handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = u.srv.Serve(srv.ln) }()
	return nil
}

type listening struct{ ln net.Listener }

func (l *listening) Addr() string { return l.ln.Addr().String() }

// readPayloads reads each release's digest and release-metadata from the source registry.
func (u *Updates) readPayloads(ctx context.Context, caFile string) (map[string]PayloadMetadata, error) {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	host := u.Source.Addr()
	rc := regclient.New(regclient.WithConfigHost(config.Host{Name: host, TLS: config.TLSEnabled, RegCert: string(ca)}),
		regclient.WithSlog(slog.New(slog.NewTextHandler(io.Discard, nil))))
	u.Digests = map[string]string{}
	meta := map[string]PayloadMetadata{}
	tmp, err := os.MkdirTemp("", "lab-updates-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	for _, v := range AllReleases() {
		img := host + "/openshift-release-dev/ocp-release:" + v + "-x86_64"
		r, err := ref.New(img)
		if err != nil {
			return nil, err
		}
		m, err := rc.ManifestHead(ctx, r, regclient.WithManifestRequireDigest())
		if err != nil {
			return nil, fmt.Errorf("release %s: %w", v, err)
		}
		u.Digests[v] = m.GetDescriptor().Digest.String()
		dir := filepath.Join(tmp, v)
		if _, err := mirrortest.TopLayerFiles(ctx, rc, img, "release-manifests/", dir); err != nil {
			return nil, fmt.Errorf("release %s: %w", v, err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "release-metadata"))
		if err != nil {
			return nil, fmt.Errorf("release %s: %w", v, err)
		}
		var pm PayloadMetadata
		if err := json.Unmarshal(b, &pm); err != nil || pm.Kind != "cincinnati-metadata-v0" || pm.Version != v {
			return nil, fmt.Errorf("release %s: release-metadata %s: %v", v, b, err)
		}
		meta[v] = pm
	}
	return meta, nil
}

// PayloadMetadata is a payload's release-manifests/release-metadata.
type PayloadMetadata struct {
	Kind     string            `json:"kind"`
	Version  string            `json:"version"`
	Previous []string          `json:"previous"`
	Metadata map[string]string `json:"metadata"`
}

func (u *Updates) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/upgrades_info/v1/graph", func(w http.ResponseWriter, r *http.Request) {
		ch, arch := r.URL.Query().Get("channel"), r.URL.Query().Get("arch")
		g, ok := u.graphs[ch]
		if arch == "" {
			arch = "amd64"
		}
		if !ok || arch != "amd64" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = fmt.Fprintf(w, `{"kind":"invalid_params","value":"no graph for channel %q arch %q"}`, ch, arch)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(g)
	})
	mux.HandleFunc("GET /api/upgrades_info/graph-data", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(u.tarball)
	})
	mux.HandleFunc("GET /signatures/{dir}/{file}", func(w http.ResponseWriter, r *http.Request) {
		algo, hex, _ := strings.Cut(r.PathValue("dir"), "=")
		sig, ok := u.sigs[algo+":"+hex]
		if !ok || r.PathValue("file") != "signature-1" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(sig)
	})
	return mux
}

// Configure implements Component: the profile has no update service field; tests and the demo
// pass UpdateURL to `bootstrap mirror --update-url` and SignatureStore to --signature-store.
func (*Updates) Configure(*site.Site, *Lab) error { return nil }

// Stop implements Component.
func (u *Updates) Stop(ctx context.Context) error {
	if u.srv == nil {
		return nil
	}
	return u.srv.Shutdown(ctx)
}

// UpdateURL is the graph endpoint (`bootstrap mirror --update-url`).
func (u *Updates) UpdateURL() string { return "http://" + u.addr + "/api/upgrades_info/v1/graph" }

// GraphDataURL is the graph-data tarball, beside the graph endpoint as on api.openshift.com.
func (u *Updates) GraphDataURL() string { return "http://" + u.addr + "/api/upgrades_info/graph-data" }

// SignatureStore is the release signature store (`bootstrap mirror --signature-store`).
func (u *Updates) SignatureStore() string { return "http://" + u.addr + "/signatures" }

// Describe implements Describer.
func (u *Updates) Describe() string {
	var chs []string
	for ch := range u.graphs {
		chs = append(chs, ch)
	}
	sort.Strings(chs)
	return fmt.Sprintf("updates   %s update service (%s, graph-data) and %s release signature store; releases %s",
		u.UpdateURL(), strings.Join(chs, ", "), u.SignatureStore(), strings.Join(AllReleases(), " "))
}

// GraphDataTarball is the graph-data the update service serves: version, channels/, and the two
// blocked edges (BlockedRisk without rules, ConditionalRisk with a PromQL rule), gzip'd tar with
// the files at its root as the update service's graph-data tarball.
func GraphDataTarball() ([]byte, error) {
	files := map[string]string{"version": "1.2.0\n"}
	for ch, vs := range Channels() {
		files["channels/"+ch+".yaml"] = "name: " + ch + "\nversions:\n- " + strings.Join(vs, "\n- ") + "\n"
	}
	for _, b := range blockedEdges {
		files["blocked-edges/"+b.to+"-"+b.name+".yaml"] = b.yaml()
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: "./" + n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}); err != nil {
			return nil, err
		}
		if _, err := tw.Write([]byte(files[n])); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
