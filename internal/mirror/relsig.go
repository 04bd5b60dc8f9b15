package mirror

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// SignatureLabel marks the ConfigMaps the cluster version operator reads release signatures from
// (namespace openshift-config-managed), so that a disconnected cluster can verify later upgrades.
const SignatureLabel = "release.openshift.io/verification-signatures"

// maxSignatures bounds how many signature-N files are fetched for one digest.
const maxSignatures = 16

// FetchReleaseSignatures reads the signatures of a release digest from a signature store laid out
// like mirror.openshift.com's: STORE/sha256=<hex>/signature-1, signature-2, ... until a 404.
// No signature at all is an error: the cluster could not verify the release.
func FetchReleaseSignatures(ctx context.Context, hc *http.Client, store, dig string) ([][]byte, error) {
	algo, hex, ok := strings.Cut(dig, ":")
	if !ok || algo != "sha256" || len(hex) != 64 {
		return nil, fmt.Errorf("release digest %q is not sha256:<64 hex>", dig)
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	var sigs [][]byte
	for i := 1; i <= maxSignatures; i++ {
		u := fmt.Sprintf("%s/%s=%s/signature-%d", strings.TrimSuffix(store, "/"), algo, hex, i)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("signature store: %w", err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("signature store %s: %w", u, err)
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("signature store %s: %s", u, resp.Status)
		}
		sigs = append(sigs, body)
	}
	if len(sigs) == 0 {
		return nil, errors.New("signature store has no signature for " + dig)
	}
	return sigs, nil
}
