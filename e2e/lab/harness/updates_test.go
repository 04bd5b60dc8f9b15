package harness

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/config"
	"github.com/regclient/regclient/types/manifest"
	"github.com/regclient/regclient/types/ref"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
)

// The lab's update service serves what the upgrade planner parses: graphs drawn from the
// payloads' release-metadata (blocked edge removed, conditional edge with its PromQL risk), the
// graph-data tarball, OpenPGP release signatures that verify with the published key and no
// other, and the source registry holds a cosign .sig tag per upgrade release that verifies with
// the cosign key.
func TestUpdateServiceOverTheSeededReleases(t *testing.T) {
	ctx := t.Context()
	seed := func(ctx context.Context, host, caFile string) ([]byte, error) {
		b := mirrortest.NewBuilder(labRC(t, host, caFile), contentSeed)
		if _, err := b.Release(ctx, mirrortest.ReleaseSpec{PushHost: host, NameHost: "quay.io", Version: ReleaseVersion, Components: 2, LayerKiB: 1}); err != nil {
			return nil, err
		}
		return []byte("kind: ImageSetConfiguration\n"), SeedReleases(ctx, b, host)
	}
	dir := t.TempDir()
	src := &Source{Seed: seed}
	up := &Updates{Source: src}
	l, err := New(dir, &Files{}, src, up)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Up(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Down(context.Background()) })

	get := func(u string) (int, []byte) {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	edges := func(ch string) (plain, cond []string) {
		code, b := get(up.UpdateURL() + "?channel=" + ch + "&arch=amd64")
		if code != 200 {
			t.Fatalf("%s: %d %s", ch, code, b)
		}
		g, err := upgrade.ParseGraph(ch, b)
		if err != nil {
			t.Fatalf("%s: the planner refuses the served graph: %v", ch, err)
		}
		for _, n := range g.Nodes {
			if want := "quay.io/openshift-release-dev/ocp-release@" + up.Digests[n.Version]; n.Payload != want {
				t.Errorf("%s: node %s payload %s, want %s", ch, n.Version, n.Payload, want)
			}
		}
		for _, e := range g.Edges {
			plain = append(plain, g.Nodes[e[0]].Version+">"+g.Nodes[e[1]].Version)
		}
		for _, c := range g.ConditionalEdges {
			for _, e := range c.Edges {
				cond = append(cond, e.From+">"+e.To+":"+c.Risks[0].Name+":"+c.Risks[0].MatchingRules[0].Type)
			}
		}
		slices.Sort(plain)
		return plain, cond
	}
	if p, c := edges("stable-4.19"); strings.Join(p, " ") != "4.18.0>4.19.2 4.19.1>4.19.2" || len(c) != 0 {
		t.Errorf("stable-4.19: %v %v (4.18.0>4.19.1 is blocked by %s)", p, c, BlockedRisk)
	}
	if p, c := edges("stable-4.20"); strings.Join(p, " ") != "4.19.1>4.19.2 4.19.1>4.20.0 4.20.0>4.20.1" ||
		strings.Join(c, " ") != "4.19.2>4.20.1:"+ConditionalRisk+":PromQL" {
		t.Errorf("stable-4.20: %v %v", p, c)
	}
	if p, _ := edges("stable-4.21"); strings.Join(p, " ") != "4.20.0>4.20.1 4.20.0>4.21.0 4.20.1>4.21.1 4.21.0>4.21.1" {
		t.Errorf("stable-4.21: %v", p)
	}
	if code, _ := get(up.UpdateURL() + "?channel=stable-4.99&arch=amd64"); code != http.StatusBadRequest {
		t.Errorf("unknown channel: %d", code)
	}

	_, tgz := get(up.GraphDataURL())
	files := untar(t, tgz)
	for _, f := range []string{"version", "channels/stable-4.20.yaml", "blocked-edges/4.19.1-" + BlockedRisk + ".yaml", "blocked-edges/4.20.1-" + ConditionalRisk + ".yaml"} {
		if _, ok := files[f]; !ok {
			t.Errorf("graph-data lacks %s (has %v)", f, files)
		}
	}

	keyFile := filepath.Join(l.Dir, ReleaseKeyFile)
	for _, v := range AllReleases() {
		d := up.Digests[v]
		code, sig := get(up.SignatureStore() + "/" + strings.Replace(d, ":", "=", 1) + "/signature-1")
		if code != 200 {
			t.Fatalf("%s signature: %d", v, code)
		}
		if got, err := VerifyReleaseSignature(keyFile, sig); err != nil || got != d {
			t.Errorf("%s: signature verifies to %q, %v", v, got, err)
		}
		tampered := append([]byte(nil), sig...)
		tampered[len(tampered)/2] ^= 0xff
		if _, err := VerifyReleaseSignature(keyFile, tampered); err == nil {
			t.Errorf("%s: a tampered signature verified", v)
		}
		if code, _ := get(up.SignatureStore() + "/" + strings.Replace(d, ":", "=", 1) + "/signature-2"); code != 404 {
			t.Errorf("%s: signature-2 %d, want 404 (the end of the list)", v, code)
		}
	}
	other, err := NewReleaseSigner()
	if err != nil {
		t.Fatal(err)
	}
	forged, _ := other.Sign(ReleaseImage(UpgradeTarget), up.Digests[UpgradeTarget])
	if _, err := VerifyReleaseSignature(keyFile, forged); err == nil {
		t.Error("a signature by another key verified")
	}

	// a lab dir started again signs with the same key: a signature served before still verifies
	_, kept := get(up.SignatureStore() + "/" + strings.Replace(up.Digests[UpgradeTarget], ":", "=", 1) + "/signature-1")
	if err := l.Down(ctx); err != nil {
		t.Fatal(err)
	}
	src = &Source{Seed: seed}
	up = &Updates{Source: src}
	if l, err = New(dir, &Files{}, src, up); err != nil {
		t.Fatal(err)
	}
	if err := l.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := VerifyReleaseSignature(keyFile, kept); err != nil || got != up.Digests[UpgradeTarget] {
		t.Errorf("after a restart the earlier signature verifies to %q: %v", got, err)
	}

	pub := cosignPub(t, filepath.Join(l.Dir, CosignPubFile))
	rc := labRC(t, src.Addr(), filepath.Join(l.Dir, CAFile))
	for _, r := range UpgradeReleases {
		d := up.Digests[r.Version]
		sr, _ := ref.New(src.Addr() + "/openshift-release-dev/ocp-release:" + strings.Replace(d, ":", "-", 1) + ".sig")
		m, err := rc.ManifestGet(ctx, sr)
		if err != nil {
			t.Fatalf("%s: cosign tag: %v", r.Version, err)
		}
		ls, _ := m.(manifest.Imager).GetLayers()
		payload, err := rc.BlobGet(ctx, sr, ls[0])
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(payload)
		_ = payload.Close()
		sig, _ := base64.StdEncoding.DecodeString(ls[0].Annotations[mirrortest.CosignSignatureAnnotation])
		if !ed25519.Verify(pub, body, sig) || !bytes.Contains(body, []byte(d)) {
			t.Errorf("%s: cosign signature does not verify over a payload naming %s: %s", r.Version, d, body)
		}
	}
}

func labRC(t *testing.T, host, caFile string) *regclient.RegClient {
	t.Helper()
	ca, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	return regclient.New(regclient.WithConfigHost(config.Host{Name: host, TLS: config.TLSEnabled, RegCert: string(ca)}),
		regclient.WithSlog(slog.New(slog.NewTextHandler(io.Discard, nil))))
}

func cosignPub(t *testing.T, file string) ed25519.PublicKey {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return k.(ed25519.PublicKey)
}

func untar(t *testing.T, tgz []byte) map[string][]byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	out := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		out[strings.TrimPrefix(h.Name, "./")] = b
	}
}
