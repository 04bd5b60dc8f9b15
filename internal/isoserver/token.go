package isoserver

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// ISO reads attributed by node: a BMC behind NAT (or fetching from another interface than its
// bmc.address) reads the shared ISO from an address that names no node, so the ISO server could
// not tell one node's read from another's. Each node's URL of the shared ISO served here therefore
// carries its own token, /n/<token>/<iso>, and the server records the node the token names.
//
// The token is HMAC-SHA256(key, node name), hex, first 20 characters (80 bits), with a random key
// kept in the work dir (TokenKeyFile). It is not a secret (it grants nothing: the ISO is
// served to anyone); it is not guessable across sites (another work dir has another key), so a
// stray read from another site's node, or a guessed URL, never counts as this node's evidence.

// TokenKeyFile is the work dir file holding the random key of the nodes' ISO URL tokens.
const TokenKeyFile = "iso-token.key"

// nodeTokenPrefix starts a tokenized ISO path: /n/<token>/<the shared ISO's path>.
const nodeTokenPrefix = "/n/"

// TokenKey reads the work dir's token key, creating it (32 random bytes, mode 0600) when
// absent. Two processes creating it at once agree: the loser reads the winner's.
func TokenKey(workDir string) ([]byte, error) {
	path := filepath.Join(workDir, TokenKeyFile)
	for range 2 {
		if b, err := fsroot.ReadBeneath(path, fsroot.Secret); err == nil && len(b) == 64 {
			return hex.DecodeString(string(b))
		}
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(workDir, 0o700); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("ISO URL token key: %w", err)
		}
		_, werr := f.WriteString(hex.EncodeToString(key))
		if err := errors.Join(werr, f.Close()); err != nil {
			return nil, fmt.Errorf("ISO URL token key: %w", err)
		}
		return key, nil
	}
	return nil, fmt.Errorf("ISO URL token key: %s is not 64 hex characters: remove it (a new key changes every node's ISO URL, so boot runs again)", path)
}

// HasTokenKey reports whether the work dir holds a token key.
func HasTokenKey(workDir string) bool {
	_, err := os.Stat(filepath.Join(workDir, TokenKeyFile))
	return err == nil
}

// nodeToken is node's token under key.
func nodeToken(key []byte, node string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(node))
	return hex.EncodeToString(m.Sum(nil))[:20]
}

// TokenURL returns the shared ISO URL u with node's token in front of its path.
func TokenURL(u string, key []byte, node string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	p.Path = nodeTokenPrefix + nodeToken(key, node) + p.Path
	return p.String()
}

// tokenRoute maps a tokenized path back to the shared ISO's path and the node its token names.
func tokenRoute(key []byte, nodes []string) func(string) (string, string, bool) {
	byToken := map[string]string{}
	for _, n := range nodes {
		byToken[nodeToken(key, n)] = n
	}
	return func(path string) (string, string, bool) {
		rest, ok := strings.CutPrefix(path, nodeTokenPrefix)
		if !ok {
			return "", "", false
		}
		tok, image, ok := strings.Cut(rest, "/")
		node, known := byToken[tok]
		if !ok || !known {
			return "", "", false
		}
		return "/" + image, node, true
	}
}

// TokenRoute is agentiso.HandlerOptions.Route for the site's nodes' tokenized ISO URLs, with
// the work dir's key: `bootstrap serve` serves them as the run's own ISO server does.
func TokenRoute(workDir string, s *site.Site) (func(string) (string, string, bool), error) {
	key, err := TokenKey(workDir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range s.Nodes {
		names = append(names, n.Name)
	}
	return tokenRoute(key, names), nil
}
