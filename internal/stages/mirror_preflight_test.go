package stages

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/config"
	"github.com/sirupsen/logrus"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// The registry checks of the preflight stage against a real TLS + htpasswd registry: all pass
// with the profile's CA and auth file; without the CA the TLS check fails showing the presented
// chain and the later ones are not checked; once the mirror stage has succeeded, preflight no
// longer uploads its scratch blob (a pass with nothing to do writes nothing to the registry).
func TestMirrorPreflightChecks(t *testing.T) {
	logrus.SetOutput(io.Discard)
	src, err := mirrortest.StartRegistry(mirrortest.RegistryOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var writes atomic.Int64
	dst, err := mirrortest.StartRegistry(mirrortest.RegistryOptions{Dir: t.TempDir(), TLS: true, User: "robot", Password: "pw",
		Wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodGet && r.Method != http.MethodHead {
					writes.Add(1)
				}
				h.ServeHTTP(w, r)
			})
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	b := mirrortest.NewBuilder(regclient.New(regclient.WithConfigHost(config.Host{Name: src.Host, TLS: config.TLSDisabled})), 3)
	refs, err := b.Sample(t.Context(), src.Host, 2)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	isc := filepath.Join(dir, "isc.yaml")
	doc := "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  additionalImages:\n  - name: " + refs[0] + "\n"
	if err := os.WriteFile(isc, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &site.Site{
		Registry: site.Registry{Host: dst.Host, Namespace: "ocp", CAFile: dst.CAFile, AuthFile: dst.AuthFile},
		Mirror:   site.Mirror{ImageSetConfig: isc, Source: site.MirrorSource{Insecure: true}},
	}
	env := &pipeline.Env{Site: s, WorkDir: t.TempDir()}
	run := func() map[string]preflight.CheckResult {
		rep := preflight.Runner{Timeout: 20 * time.Second}.Run(context.Background(), MirrorPreflightChecks(env))
		out := map[string]preflight.CheckResult{}
		for _, c := range rep.Checks {
			out[c.Name] = c
		}
		return out
	}
	name := func(what string) string { return "registry " + dst.Host + " " + what }

	res := run()
	if len(res) != 5 {
		t.Fatalf("%d checks, want reach, TLS, credentials, push and sources: %+v", len(res), res)
	}
	for n, c := range res {
		want := finding.Pass
		if n == "mirror sources readable" {
			want = finding.Warn // the source's TLS is not verified
		}
		if c.Status != want {
			t.Errorf("%s: %s %s (%s), want %s", n, c.Status, c.Message, c.Remedy, want)
		}
	}
	if writes.Load() == 0 {
		t.Error("push permission passed without any upload")
	}

	s.Registry.CAFile = ""
	res = run()
	if c := res[name("TLS trusted")]; c.Status != finding.Fail || !strings.Contains(c.Message, "presented chain") || !strings.Contains(c.Remedy, "caFile") {
		t.Errorf("untrusted CA: %+v", c)
	}
	if c := res[name("push allowed")]; c.Status != finding.Warn || !strings.Contains(c.Message, "not checked") {
		t.Errorf("push after a TLS failure: %+v", c)
	}
	s.Registry.CAFile = dst.CAFile

	s.Mirror.Source.Registry = "127.0.0.1:1"
	res = run()
	if c := res["mirror sources readable"]; c.Status != finding.Fail || c.Remedy == "" {
		t.Errorf("source down: %+v", c)
	}
	s.Mirror.Source.Registry = ""

	// the journal of the work dir records a successful mirror (inside a pipeline run preflight
	// sees no later stage's output in env.Outputs: it reads the journal)
	j, _, err := pipeline.OpenJournal(pipeline.JournalPath(env.WorkDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []pipeline.Entry{
		{Kind: pipeline.EntryStageStarted, Run: 1, Stage: "mirror", Attempt: 1},
		{Kind: pipeline.EntryStageSucceeded, Run: 1, Stage: "mirror", Attempt: 1, Data: json.RawMessage(`{"images":1}`)},
	} {
		if _, err := j.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	before := writes.Load()
	res = run()
	if c := res[name("push allowed")]; c.Status != finding.Pass {
		t.Errorf("after the mirror: %+v", c)
	}
	if w := writes.Load() - before; w != 0 {
		t.Errorf("preflight wrote %d times to the registry after the mirror had succeeded", w)
	}
	env.Outputs = map[string]json.RawMessage{"mirror": json.RawMessage(`{}`)}
	env.WorkDir = t.TempDir()
	if c := run()[name("push allowed")]; c.Status != finding.Pass || writes.Load() != before {
		t.Errorf("with the mirror output in env.Outputs: %+v, %d writes", c, writes.Load()-before)
	}

	env.Site = &site.Site{}
	if n := len(MirrorPreflightChecks(env)); n != 0 {
		t.Errorf("a profile without a registry got %d registry checks", n)
	}
}
