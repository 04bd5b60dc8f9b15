package upgrade

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"golang.org/x/crypto/openpgp" //nolint:staticcheck // the format the CVO's verifier reads (library-go verify)
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/mirror"
)

// VerificationAnnotation marks the ConfigMaps in SignatureNamespace that configure the CVO's
// release verifier; their keys named verifierKeyPrefix+NAME hold an armored public keyring each.
const (
	VerificationAnnotation = "release.openshift.io/verification-config-map"
	verifierKeyPrefix      = "verifier-public-key-"
	maxSignature           = 64 << 10 // a signed JSON claim is a few hundred bytes
)

// signatureFindings checks offline, before anything is written, what the CVO will check when
// desiredUpdate is set: each hop's release digest has a signature (a binaryData key
// sha256-<hex>-N of a ConfigMap labelled mirror.SignatureLabel, given or already in the cluster)
// that verifies with a key of the cluster's own verifier ConfigMap and names that digest. With no
// verifier ConfigMap in the cluster there is nothing to verify against: a warning says so.
func signatureFindings(ctx context.Context, c *cluster.Client, hops []Hop, given []*unstructured.Unstructured) ([]Finding, error) {
	cms, err := c.List(ctx, "v1", "ConfigMap", SignatureNamespace, "")
	if err != nil {
		return nil, err
	}
	var keyring openpgp.EntityList
	var keyNames []string
	sigs := map[string][]byte{} // binaryData key -> signature
	addSigs := func(u *unstructured.Unstructured) {
		if _, ok := u.GetLabels()[mirror.SignatureLabel]; !ok || u.GetKind() != "ConfigMap" {
			return
		}
		bd, _, _ := unstructured.NestedMap(u.Object, "binaryData")
		for k, v := range bd {
			s, _ := v.(string)
			if b, err := base64.StdEncoding.DecodeString(s); err == nil && len(b) <= maxSignature {
				sigs[k] = b
			}
		}
	}
	for i := range cms {
		u := &cms[i]
		addSigs(u)
		if _, ok := u.GetAnnotations()[VerificationAnnotation]; !ok {
			continue
		}
		data, _, _ := unstructured.NestedStringMap(u.Object, "data")
		for k, v := range data {
			if !strings.HasPrefix(k, verifierKeyPrefix) {
				continue
			}
			el, err := openpgp.ReadArmoredKeyRing(strings.NewReader(v))
			if err != nil {
				return []Finding{{Check: "signature", Object: "ConfigMap/" + u.GetName(), Result: Fail,
					Message: fmt.Sprintf("%s is not an armored OpenPGP keyring (%v): the CVO cannot verify with it either", k, err)}}, nil
			}
			keyring = append(keyring, el...)
			keyNames = append(keyNames, u.GetName()+"/"+k)
		}
	}
	for _, u := range given {
		addSigs(u)
	}
	if len(keyring) == 0 {
		return []Finding{{Check: "signature", Object: "ConfigMap " + SignatureNamespace, Result: Warn,
			Message: "no ConfigMap annotated " + VerificationAnnotation + " holds a " + verifierKeyPrefix + "* key: the signatures cannot be verified offline (the CVO verifies them when the hop starts)"}}, nil
	}
	sort.Strings(keyNames)
	var fs []Finding
	for _, h := range hops {
		d := h.Payload[strings.LastIndex(h.Payload, "@")+1:]
		prefix := strings.Replace(d, ":", "-", 1) + "-"
		var keys []string
		for k := range sigs {
			if strings.HasPrefix(k, prefix) {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		obj := "hop-" + h.To
		if len(keys) == 0 {
			fs = append(fs, Finding{Check: "signature", Object: obj, Result: Fail, Message: fmt.Sprintf(
				"no signature for %s (%s): the CVO will refuse it; mirror the release with --signature-store and give the signature ConfigMap with --signatures DIR", d, h.To)})
			continue
		}
		var why []string
		ok := ""
		for _, k := range keys {
			by, err := verifySignature(keyring, sigs[k], d)
			if err == nil {
				ok = k + " by " + by
				break
			}
			why = append(why, k+": "+err.Error())
		}
		if ok != "" {
			fs = append(fs, Finding{Check: "signature", Object: obj, Result: Pass, Message: fmt.Sprintf("%s verified offline: %s (keys of %s)", d, ok, strings.Join(keyNames, ", "))})
		} else {
			fs = append(fs, Finding{Check: "signature", Object: obj, Result: Fail, Message: fmt.Sprintf(
				"no signature of %s verifies with the cluster's keys (%s): %s; the CVO will refuse it: bring the signature made by the release key", d, strings.Join(keyNames, ", "), strings.Join(why, "; "))})
		}
	}
	return fs, nil
}

// verifySignature checks one signature as the CVO does: an OpenPGP message signed by a key of
// keyring whose JSON claim names digest. It returns the signer's identity.
func verifySignature(keyring openpgp.EntityList, sig []byte, digest string) (string, error) {
	md, err := openpgp.ReadMessage(bytes.NewReader(sig), keyring, nil, nil)
	if err != nil {
		return "", fmt.Errorf("not an OpenPGP message: %v", err)
	}
	body, err := io.ReadAll(io.LimitReader(md.UnverifiedBody, maxSignature))
	if err != nil {
		return "", fmt.Errorf("unreadable: %v", err)
	}
	if md.SignatureError != nil || md.SignedBy == nil {
		return "", fmt.Errorf("not signed by a key of the cluster's keyring (key id %X)", md.SignedByKeyId)
	}
	var claim struct {
		Critical struct {
			Image struct {
				Digest string `json:"docker-manifest-digest"`
			} `json:"image"`
		} `json:"critical"`
	}
	if err := json.Unmarshal(body, &claim); err != nil {
		return "", fmt.Errorf("its claim is not JSON: %v", err)
	}
	if claim.Critical.Image.Digest != digest {
		return "", fmt.Errorf("it signs %q, not this digest", claim.Critical.Image.Digest)
	}
	var names []string
	for name := range md.SignedBy.Entity.Identities {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return fmt.Sprintf("key %X", md.SignedByKeyId), nil
	}
	return names[0], nil
}
