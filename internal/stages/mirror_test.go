package stages

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/config"
	"github.com/sirupsen/logrus"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

func TestMirrorStageRunVerifyAndRerun(t *testing.T) {
	logrus.SetOutput(io.Discard)
	ctx := t.Context()
	src, dst, b := mirrortest.Pair(t, 7)
	rel, err := b.Release(ctx, mirrortest.ReleaseSpec{PushHost: src.Host, Version: "4.16.3", Components: 5, LayerKiB: 4})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	isc := filepath.Join(dir, "isc.yaml")
	doc := "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  platform:\n    release: " + rel.Image + "\n"
	if err := os.WriteFile(isc, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	sigStore := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/sha256="+strings.TrimPrefix(rel.Digest, "sha256:")+"/signature-1") {
			_, _ = w.Write([]byte("gpg-signature-bytes"))
			return
		}
		http.NotFound(w, r)
	}))
	defer sigStore.Close()
	s := &site.Site{
		Registry: site.Registry{Host: dst.Host, Namespace: "ocp", CAFile: dst.CAFile, AuthFile: dst.AuthFile},
		Mirror:   site.Mirror{ImageSetConfig: isc, Source: site.MirrorSource{Insecure: true}, SignatureStore: sigStore.URL},
	}
	steps := newMemSteps()
	var events []pipeline.Event
	var mu sync.Mutex
	env := &pipeline.Env{Site: s, WorkDir: t.TempDir(), Steps: steps,
		Events: func(e pipeline.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }}

	st := Mirror{}
	in1, err := st.Inputs(env)
	if err != nil {
		t.Fatal(err)
	}
	out, err := st.Run(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	mo := out.(MirrorOutput)
	if mo.Images != 6 || mo.ReleaseImage != dst.Host+"/ocp/openshift-release-dev/ocp-release@"+rel.Digest {
		t.Errorf("output %+v; want 6 images and the release by digest %s", mo, rel.Digest)
	}
	if len(mo.SignatureConfigMaps) != 2 || mo.SignatureConfigMaps[0] != "signature-configmap.yaml" {
		t.Errorf("signature configmaps %v, want oc-mirror's signature-configmap.yaml and .json", mo.SignatureConfigMaps)
	} else if b, err := os.ReadFile(filepath.Join(env.WorkDir, mo.SignatureConfigMaps[0])); err != nil || !strings.Contains(string(b), "openshift-config-managed") ||
		!strings.Contains(string(b), "name: mirrored-release-signatures") {
		t.Errorf("signature configmap: %v\n%s", err, b)
	}
	if steps.records != 6 {
		t.Errorf("%d steps journaled, want one per image (6)", steps.records)
	}
	for _, f := range []string{"idms-oc-mirror.yaml", "content.json", "mapping.txt"} {
		if _, err := os.Stat(filepath.Join(env.WorkDir, f)); err != nil {
			t.Errorf("output %s: %v", f, err)
		}
	}
	progress := 0
	var final pipeline.Event
	for _, e := range events {
		if e.Kind == pipeline.Progress && e.Unit == "bytes" {
			progress++
			final = e
		}
	}
	if progress == 0 {
		t.Error("no progress events")
	}
	// the last one counts every image and every blob done
	if final.DoneTotal != 6 || final.Done != 6 || final.PartsUnit != "blobs" || final.PartsTotal == 0 ||
		final.Parts != final.PartsTotal || final.Current != final.Total {
		t.Errorf("final progress event: %+v", final)
	}
	if err := st.Verify(ctx, env); err != nil {
		t.Fatalf("verify after run: %v", err)
	}
	// rerun: nothing new journaled, same outputs
	before, _ := os.ReadFile(filepath.Join(env.WorkDir, "content.json"))
	if _, err := st.Run(ctx, env); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(env.WorkDir, "content.json"))
	if steps.records != 6 || string(before) != string(after) {
		t.Logf("before:\n%s\nafter:\n%s", before, after)
		t.Errorf("rerun journaled %d steps (want 6) or changed content.json", steps.records)
	}
	lines, err := st.Plan(ctx, env)
	if err != nil || len(lines) != 7 {
		t.Errorf("plan: %v, %d lines (want summary + 6)", err, len(lines))
	}
	// an in-site change of the ISC changes the fingerprint
	if err := os.WriteFile(isc, []byte(doc+"  additionalImages: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in2, _ := st.Inputs(env)
	if in1.(mirrorInputs).ISCSHA256 == in2.(mirrorInputs).ISCSHA256 {
		t.Error("ISC change did not change the input fingerprint")
	}
}

// TestMirrorStageMultiArchRelease: the default profile path (mirror.platforms: the cluster's
// architecture) with a multi-arch release into distribution's default configuration, which refuses
// sparse indexes: the stage succeeds with every platform copied and one warning; the plan says what
// the filter leaves out; with mirror.platforms: [all] nothing is refused at all.
func TestMirrorStageMultiArchRelease(t *testing.T) {
	logrus.SetOutput(io.Discard)
	ctx := t.Context()
	src, err := mirrortest.StartRegistry(mirrortest.RegistryOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	b := mirrortest.NewBuilder(regclient.New(regclient.WithConfigHost(config.Host{Name: src.Host, TLS: config.TLSDisabled})), 8)
	rel, err := b.Release(ctx, mirrortest.ReleaseSpec{PushHost: src.Host, Version: "4.16.3", Components: 3, LayerKiB: 4, Multi: true})
	if err != nil {
		t.Fatal(err)
	}
	isc := filepath.Join(t.TempDir(), "isc.yaml")
	doc := "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  platform:\n    release: " + rel.Image + "\n"
	if err := os.WriteFile(isc, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		platforms []string
		refused   bool
	}{{[]string{"linux/amd64"}, true}, {[]string{"all"}, false}} {
		t.Run(strings.Join(tc.platforms, ","), func(t *testing.T) {
			dst, err := mirrortest.StartRegistry(mirrortest.RegistryOptions{Dir: t.TempDir(), TLS: true, User: "robot", Password: "pw"})
			if err != nil {
				t.Fatal(err)
			}
			defer dst.Close()
			s := &site.Site{
				Registry: site.Registry{Host: dst.Host, Namespace: "ocp", CAFile: dst.CAFile, AuthFile: dst.AuthFile},
				Mirror:   site.Mirror{ImageSetConfig: isc, Source: site.MirrorSource{Insecure: true}, Platforms: tc.platforms},
			}
			var mu sync.Mutex
			var warnings []string
			env := &pipeline.Env{Site: s, WorkDir: t.TempDir(), Steps: newMemSteps(), Events: func(e pipeline.Event) {
				if e.Kind == pipeline.Warning {
					mu.Lock()
					warnings = append(warnings, e.Message)
					mu.Unlock()
				}
			}}
			st := Mirror{}
			lines, err := st.Plan(ctx, env)
			if err != nil {
				t.Fatal(err)
			}
			plan := strings.Join(lines, "\n")
			if got := strings.Contains(plan, "1 platform image(s) of multi-arch indexes filtered out"); got != tc.refused {
				t.Errorf("plan mentions the filtered platform: %v, want %v\n%s", got, tc.refused, plan)
			}
			out, err := st.Run(ctx, env)
			if err != nil {
				t.Fatal(err)
			}
			mo := out.(MirrorOutput)
			if mo.ReleaseImage != dst.Host+"/ocp/openshift-release-dev/ocp-release@"+rel.Digest {
				t.Errorf("release %s, want the source digest %s", mo.ReleaseImage, rel.Digest)
			}
			if (len(mo.SparseRefused) == 1) != tc.refused || (len(warnings) == 1) != tc.refused || len(warnings) > 1 {
				t.Errorf("refused %v, warnings %q; want refused=%v and at most one warning", mo.SparseRefused, warnings, tc.refused)
			}
			if err := st.Verify(ctx, env); err != nil {
				t.Fatalf("verify: %v", err)
			}
			// the rerun finds everything present and keeps the record of the refusal
			before, _ := os.ReadFile(filepath.Join(env.WorkDir, "content.json"))
			if got := strings.Contains(string(before), `"sparseRefused": true`); got != tc.refused {
				t.Errorf("content.json records the refusal: %v, want %v", got, tc.refused)
			}
			warnings = nil
			if _, err := st.Run(ctx, env); err != nil || len(warnings) != 0 {
				t.Errorf("rerun: %v, warnings %q", err, warnings)
			}
			if after, _ := os.ReadFile(filepath.Join(env.WorkDir, "content.json")); string(after) != string(before) {
				t.Errorf("rerun changed content.json:\n%s\nwas:\n%s", after, before)
			}
		})
	}
}

// TestMirrorStageShowsEveryISCProblem: an invalid ImageSetConfiguration fails the stage before
// anything is copied, with every problem and its line in the error, not just the first.
func TestMirrorStageShowsEveryISCProblem(t *testing.T) {
	isc := filepath.Join(t.TempDir(), "isc.yaml")
	doc := "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  helm: {}\n  additionalImages:\n  - name: [a]\n  - {}\n"
	if err := os.WriteFile(isc, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &site.Site{
		Registry: site.Registry{Host: "127.0.0.1:1", Namespace: "ocp"},
		Mirror:   site.Mirror{ImageSetConfig: isc, Source: site.MirrorSource{Insecure: true}},
	}
	env := &pipeline.Env{Site: s, WorkDir: t.TempDir(), Steps: newMemSteps(), Events: func(pipeline.Event) {}}
	_, err := Mirror{}.Run(t.Context(), env)
	if err == nil {
		t.Fatal("an invalid ImageSetConfiguration was accepted")
	}
	for _, w := range []string{
		isc + ":4:3: error: mirror.helm: field \"helm\" is not supported",
		isc + ":6:11: error: mirror.additionalImages[0].name: expected a string, found a list",
		isc + ":7:5: error: mirror.additionalImages[1].name: required",
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
}
