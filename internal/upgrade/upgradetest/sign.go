package upgradetest

import (
	"bytes"
	"crypto"
	_ "crypto/sha256" // the hash the signatures use
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"golang.org/x/crypto/openpgp"        //nolint:staticcheck // the format the CVO verifies; a throwaway key in tests only
	"golang.org/x/crypto/openpgp/armor"  //nolint:staticcheck // see above
	"golang.org/x/crypto/openpgp/packet" //nolint:staticcheck // see above
)

// pgpConfig picks SHA-256 (x/crypto/openpgp's own default list starts with RIPEMD-160, which the
// standard library does not register).
var pgpConfig = &packet.Config{DefaultHash: crypto.SHA256}

// Signer is a throwaway OpenPGP key that signs releases as the release key does: an atomic
// container signature (JSON naming the manifest digest) in a signed OpenPGP message, the form
// the CVO's verifier (library-go pkg/verify) reads from the signature ConfigMaps.
type Signer struct{ e *openpgp.Entity }

// NewSigner makes a throwaway key.
func NewSigner(t testing.TB, name string) *Signer {
	t.Helper()
	e, err := openpgp.NewEntity(name, "throwaway", name+"@example.invalid", pgpConfig)
	if err != nil {
		t.Fatal(err)
	}
	return &Signer{e: e}
}

// Keyring is the key's public half, as the CVO's keyring holds it.
func (s *Signer) Keyring() openpgp.EntityList { return openpgp.EntityList{s.e} }

// Sign signs a release digest (sha256:...).
func (s *Signer) Sign(t testing.TB, digest string) []byte {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"critical": map[string]any{"type": "atomic container signature",
		"image":    map[string]any{"docker-manifest-digest": digest},
		"identity": map[string]any{"docker-reference": "quay.io/openshift-release-dev/ocp-release"}}, "optional": map[string]any{}})
	var b bytes.Buffer
	w, err := openpgp.Sign(&b, s.e, nil, pgpConfig)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(body); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// verify checks a signature against the keyring and that it names digest.
func verify(keyring openpgp.EntityList, sig []byte, digest string) error {
	md, err := openpgp.ReadMessage(bytes.NewReader(sig), keyring, nil, nil)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(io.LimitReader(md.UnverifiedBody, 64<<10))
	if err != nil {
		return err
	}
	if md.SignatureError != nil || md.SignedBy == nil {
		return fmt.Errorf("not signed by a key of the keyring: %v", md.SignatureError)
	}
	var s struct {
		Critical struct {
			Image struct {
				Digest string `json:"docker-manifest-digest"`
			} `json:"image"`
		} `json:"critical"`
	}
	if err := json.Unmarshal(body, &s); err != nil || s.Critical.Image.Digest != digest {
		return fmt.Errorf("signs %q, not %s", s.Critical.Image.Digest, digest)
	}
	return nil
}

// decodeBinary reads a ConfigMap binaryData value as the API returns it (base64).
func decodeBinary(v any) []byte {
	s, _ := v.(string)
	b, _ := base64.StdEncoding.DecodeString(s)
	return b
}

// ArmoredPublicKey is the key's public half as the CVO's verifier ConfigMap holds it (the
// verifier-public-key-* value of openshift-config-managed/release-verification).
func (s *Signer) ArmoredPublicKey(t testing.TB) string {
	t.Helper()
	var b bytes.Buffer
	w, err := armor.Encode(&b, openpgp.PublicKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.e.Serialize(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
