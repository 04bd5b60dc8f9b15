package harness

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/crypto/openpgp"        //nolint:staticcheck // the CVO's signatures are OpenPGP; a throwaway lab key
	"golang.org/x/crypto/openpgp/armor"  //nolint:staticcheck
	"golang.org/x/crypto/openpgp/packet" //nolint:staticcheck
)

// ReleaseSigner signs release digests as the release signature store holds them: an OpenPGP
// signed message (not detached) whose literal data is the "atomic container signature" JSON
// naming the image and its manifest digest (library-go pkg/verify reads the same fields).
type ReleaseSigner struct {
	entity *openpgp.Entity
}

// NewReleaseSigner makes a throwaway OpenPGP key (RSA 2048): it lives as long as the lab process.
func NewReleaseSigner() (*ReleaseSigner, error) {
	e, err := openpgp.NewEntity("bootstrap lab", "throwaway release signing key", "lab@bootstrap.invalid", &packet.Config{RSABits: 2048})
	if err != nil {
		return nil, err
	}
	// NewEntity states no preferred hash, and Sign then falls back to RIPEMD-160: prefer SHA-256
	// and sign the identity again so the exported key carries the preference.
	for _, id := range e.Identities {
		id.SelfSignature.PreferredHash = []uint8{8} // SHA-256 (RFC 4880 9.4)
		if err := id.SelfSignature.SignUserId(id.UserId.Id, e.PrimaryKey, e.PrivateKey, nil); err != nil {
			return nil, err
		}
	}
	return &ReleaseSigner{entity: e}, nil
}

// LoadReleaseSigner reads the signer a lab dir kept (its private key in file, binary OpenPGP), or
// makes one and keeps it there: a lab dir restarted signs with the same key, so signatures
// mirrored earlier still verify against ReleaseKeyFile.
func LoadReleaseSigner(file string) (*ReleaseSigner, error) {
	if b, err := os.ReadFile(file); err == nil {
		el, err := openpgp.ReadKeyRing(bytes.NewReader(b))
		if err != nil || len(el) != 1 {
			return nil, fmt.Errorf("%s: %v (%d keys): remove it to make a new throwaway key", file, err, len(el))
		}
		return &ReleaseSigner{entity: el[0]}, nil
	}
	s, err := NewReleaseSigner()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := s.entity.SerializePrivate(&buf, nil); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return nil, err
	}
	return s, os.WriteFile(file, buf.Bytes(), 0o600)
}

// AtomicSignature is the signed payload's shape.
type AtomicSignature struct {
	Critical struct {
		Identity struct {
			DockerReference string `json:"docker-reference"`
		} `json:"identity"`
		Image struct {
			DockerManifestDigest string `json:"docker-manifest-digest"`
		} `json:"image"`
		Type string `json:"type"`
	} `json:"critical"`
	Optional map[string]string `json:"optional"`
}

// Sign returns the signature of digest for the image named ref.
func (s *ReleaseSigner) Sign(ref, digest string) ([]byte, error) {
	var a AtomicSignature
	a.Critical.Identity.DockerReference = ref
	a.Critical.Image.DockerManifestDigest = digest
	a.Critical.Type = "atomic container signature"
	a.Optional = map[string]string{"creator": "bootstrap lab"}
	payload, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	w, err := openpgp.Sign(&out, s.entity, nil, nil)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(payload); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// WritePublic writes the OpenPGP public key (armored) to keyFile and the cosign public key (PEM,
// PKIX) to cosignFile.
func (s *ReleaseSigner) WritePublic(keyFile, cosignFile string) error {
	var buf bytes.Buffer
	aw, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
	if err != nil {
		return err
	}
	if err := s.entity.Serialize(aw); err != nil {
		return err
	}
	if err := aw.Close(); err != nil {
		return err
	}
	der, err := x509.MarshalPKIXPublicKey(CosignKey().Public())
	if err != nil {
		return err
	}
	for path, b := range map[string][]byte{keyFile: buf.Bytes(), cosignFile: pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// VerifyReleaseSignature checks sig against the armored public key in keyFile and returns the
// manifest digest it signs: an error when the key did not make it or the payload is not an
// atomic container signature.
func VerifyReleaseSignature(keyFile string, sig []byte) (string, error) {
	f, err := os.Open(keyFile)
	if err != nil {
		return "", err
	}
	defer f.Close()
	ring, err := openpgp.ReadArmoredKeyRing(f)
	if err != nil {
		return "", err
	}
	md, err := openpgp.ReadMessage(bytes.NewReader(sig), ring, nil, nil)
	if err != nil {
		return "", err
	}
	body, err := io.ReadAll(md.UnverifiedBody) // reading to EOF checks the signature
	if err != nil {
		return "", err
	}
	if md.SignatureError != nil || md.SignedBy == nil {
		return "", fmt.Errorf("signature: %v (signed by a known key: %v)", md.SignatureError, md.SignedBy != nil)
	}
	var a AtomicSignature
	if err := json.Unmarshal(body, &a); err != nil {
		return "", err
	}
	if a.Critical.Type != "atomic container signature" {
		return "", errors.New("not an atomic container signature: " + a.Critical.Type)
	}
	return a.Critical.Image.DockerManifestDigest, nil
}
