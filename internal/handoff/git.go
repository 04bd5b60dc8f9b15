package handoff

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// GitRefs reads the refs an HTTPS Git server advertises (smart HTTP, the first request of every
// clone), verifying TLS with ca (PEM; nil means the system roots) and sending the repository's
// credentials. It returns ref name -> commit.
func GitRefs(ctx context.Context, r Repo, client *http.Client) (map[string]string, error) {
	host, ssh, err := repoHost(r.URL)
	if err != nil {
		return nil, err
	}
	if ssh {
		return nil, fmt.Errorf("git %s: only https repositories can be checked from the jump host", host)
	}
	if client == nil {
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if len(r.CA) > 0 {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(r.CA) {
				return nil, fmt.Errorf("git %s: gitops.caFile holds no PEM certificate", host)
			}
			tc.RootCAs = pool
		}
		client = &http.Client{Transport: &http.Transport{TLSClientConfig: tc, Proxy: http.ProxyFromEnvironment}}
	}
	u := strings.TrimSuffix(r.URL, "/") + "/info/refs?service=git-upload-pack"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if r.Username != "" || r.Password != "" {
		req.SetBasicAuth(r.Username, r.Password)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("git %s: %w", host, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized, http.StatusForbidden:
		return nil, fmt.Errorf("git %s: %s: check gitops.credentials", r.URL, resp.Status)
	default:
		return nil, fmt.Errorf("git %s: %s", r.URL, resp.Status)
	}
	return parseAdvertisement(resp.Body)
}

// parseAdvertisement reads pkt-lines: "# service=git-upload-pack", a flush, then
// "<sha> <ref>[\0capabilities]" lines until a flush.
func parseAdvertisement(body io.Reader) (map[string]string, error) {
	br := bufio.NewReader(io.LimitReader(body, 16<<20))
	refs := map[string]string{}
	// Smart HTTP sends "# service=..." and a flush before the refs; SSH sends the refs alone.
	flushes, want := 0, 1
	for flushes < want {
		var hdr [4]byte
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) && len(refs) > 0 {
				break
			}
			return nil, fmt.Errorf("git: not a smart HTTP server (is the URL the repository's?): %w", err)
		}
		n, err := strconv.ParseUint(string(hdr[:]), 16, 16)
		if err != nil {
			return nil, fmt.Errorf("git: bad pkt-line length %q", hdr)
		}
		if n == 0 {
			flushes++
			continue
		}
		if n < 4 {
			return nil, fmt.Errorf("git: bad pkt-line length %d", n)
		}
		line := make([]byte, n-4)
		if _, err := io.ReadFull(br, line); err != nil {
			return nil, fmt.Errorf("git: %w", err)
		}
		s := strings.TrimSuffix(string(line), "\n")
		if strings.HasPrefix(s, "# service=") {
			want = 2
			continue
		}
		s, _, _ = strings.Cut(s, "\x00")
		sha, ref, ok := strings.Cut(s, " ")
		if ok {
			refs[ref] = sha
		}
	}
	return refs, nil
}

var shaRE = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

// CheckRevision reports whether revision names something the refs hold: a branch, a tag, HEAD,
// a full ref name, or a commit a ref points at. A bare commit id no ref points at cannot be
// confirmed without fetching; it is accepted with ok=false and a note.
func CheckRevision(refs map[string]string, revision string) (ok bool, note string, err error) {
	if revision == "" {
		revision = "HEAD"
	}
	for _, name := range []string{revision, "refs/heads/" + revision, "refs/tags/" + revision} {
		if _, found := refs[name]; found {
			return true, "", nil
		}
	}
	if shaRE.MatchString(revision) {
		for _, sha := range refs {
			if strings.HasPrefix(sha, revision) {
				return true, "", nil
			}
		}
		return false, "commit " + revision + " is not the tip of any branch or tag; it is checked when Argo CD fetches", nil
	}
	return false, "", fmt.Errorf("git: revision %q is neither a branch, a tag nor a commit of the repository", revision)
}
