package upgrade_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// sigConfigMap is a signature ConfigMap as the mirror writes it: binaryData sha256-<hex>-1.
func sigConfigMap(digest string, sig []byte) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata":   map[string]any{"name": "release-signatures", "namespace": upgrade.SignatureNamespace, "labels": map[string]any{mirror.SignatureLabel: ""}},
		"binaryData": map[string]any{strings.Replace(digest, ":", "-", 1) + "-1": base64.StdEncoding.EncodeToString(sig)}}}
}

// Preflight verifies each hop's release signature offline as the CVO will: against the keys of
// the cluster's own verifier ConfigMap, the claim naming the hop's digest. A signature by the
// release key passes; one by another key, one naming another release and none at all fail with
// the remedy, before anything is written; without a verifier ConfigMap it can only warn.
func TestPreflightVerifiesSignaturesOffline(t *testing.T) {
	l := newLab(t, upgradetest.LabOptions{Version: "4.17.10"}, upgradetest.Faults{})
	hop := upgrade.Hop{From: "4.17.10", To: "4.18.5", Payload: upgradetest.Payload("4.18.5")}
	digest := hop.Payload[strings.LastIndex(hop.Payload, "@")+1:]
	release, other := upgradetest.NewSigner(t, "release key"), upgradetest.NewSigner(t, "someone else")
	check := func(sigs ...*unstructured.Unstructured) upgrade.Finding {
		t.Helper()
		v, err := upgrade.ReadView(context.Background(), l.c, l.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		fs, err := upgrade.Preflight(context.Background(), l.c, v, upgrade.PreflightOptions{CanaryPool: "worker-canary", Hops: []upgrade.Hop{hop}, Signatures: sigs})
		if err != nil {
			t.Fatal(err)
		}
		var got []upgrade.Finding
		for _, f := range fs {
			if f.Check == "signature" {
				got = append(got, f)
			}
		}
		if len(got) != 1 {
			t.Fatalf("signature findings %+v", got)
		}
		return got[0]
	}
	if f := check(sigConfigMap(digest, release.Sign(t, digest))); f.Result != upgrade.Warn || !strings.Contains(f.Message, "cannot be verified offline") {
		t.Errorf("no verifier ConfigMap: %+v", f)
	}
	clustertest.Create(t, l.d, clustertest.GVR("", "v1", "configmaps"), map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "release-verification", "namespace": upgrade.SignatureNamespace, "annotations": map[string]any{upgrade.VerificationAnnotation: ""}},
		"data":     map[string]any{"verifier-public-key-redhat": release.ArmoredPublicKey(t)}})
	for _, tc := range []struct {
		name   string
		sigs   []*unstructured.Unstructured
		result string
		say    string
	}{
		{"signed by the release key", []*unstructured.Unstructured{sigConfigMap(digest, release.Sign(t, digest))}, upgrade.Pass, "verified offline: sha256-"},
		{"signed by another key", []*unstructured.Unstructured{sigConfigMap(digest, other.Sign(t, digest))}, upgrade.Fail, "not signed by a key of the cluster's keyring"},
		{"the claim names another release", []*unstructured.Unstructured{sigConfigMap(digest, release.Sign(t, "sha256:"+strings.Repeat("0", 64)))}, upgrade.Fail, "not this digest"},
		{"no signature", nil, upgrade.Fail, "no signature for " + digest},
	} {
		if f := check(tc.sigs...); f.Result != tc.result || !strings.Contains(f.Message, tc.say) || f.Object != "hop-4.18.5" {
			t.Errorf("%s: %+v", tc.name, f)
		}
	}
	// the run stops in preflight on the wrong key: desiredUpdate is never set
	o := l.opts(t)
	o.Signatures = []*unstructured.Unstructured{sigConfigMap(digest, other.Sign(t, digest))}
	_, err := upgrade.Run(context.Background(), l.c, &upgradetest.Journal{}, o)
	var pe *upgrade.PreflightError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "hop-4.18.5: no signature of "+digest+" verifies") {
		t.Fatalf("run with a signature by the wrong key: %v", err)
	}
	if n := l.cvPatch.Load(); n != 0 {
		t.Errorf("ClusterVersion patched %d times after a failed signature preflight", n)
	}
}
