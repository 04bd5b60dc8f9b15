package handoff_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/handoff"
)

func pkt(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }

// gitServer answers the smart-HTTP ref advertisement the way git-http-backend does.
func gitServer() *httptest.Server {
	return httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, _ := r.BasicAuth(); u != "bootstrap" || p != "tok" {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.URL.Path != "/platform/config.git/info/refs" || r.URL.Query().Get("service") != "git-upload-pack" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
		fmt.Fprint(w, pkt("# service=git-upload-pack\n")+"0000"+
			pkt("1111111111111111111111111111111111111111 HEAD\x00multi_ack side-band-64k symref=HEAD:refs/heads/main\n")+
			pkt("1111111111111111111111111111111111111111 refs/heads/main\n")+
			pkt("2222222222222222222222222222222222222222 refs/tags/v1.0\n")+"0000")
	}))
}

func TestGitRefsVerifiesTLSCredentialsAndRevision(t *testing.T) {
	srv := gitServer()
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	repo := handoff.Repo{URL: srv.URL + "/platform/config.git", Username: "bootstrap", Password: "tok", CA: ca}
	refs, err := handoff.GitRefs(context.Background(), repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, rev := range []string{"main", "v1.0", "HEAD", "2222222", "refs/heads/main"} {
		if ok, _, err := handoff.CheckRevision(refs, rev); !ok || err != nil {
			t.Errorf("revision %s: %v %v", rev, ok, err)
		}
	}
	if _, _, err := handoff.CheckRevision(refs, "release-9"); err == nil {
		t.Error("a missing branch must fail")
	}
	if ok, note, err := handoff.CheckRevision(refs, "abcdef0"); ok || err != nil || note == "" {
		t.Errorf("an unknown commit id is noted, not failed: %v %q %v", ok, note, err)
	}

	bad := repo
	bad.Password = "wrong"
	if _, err := handoff.GitRefs(context.Background(), bad, nil); err == nil || !strings.Contains(err.Error(), "gitops.credentials") {
		t.Errorf("bad credentials: %v", err)
	}
	noCA := repo
	noCA.CA = nil
	if _, err := handoff.GitRefs(context.Background(), noCA, nil); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("TLS must be verified: %v", err)
	}
}
