package mirror

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestReleaseSignatureConfigMap(t *testing.T) {
	dig := "sha256:" + strings.Repeat("ab", 32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/sigs/sha256=" + strings.Repeat("ab", 32) + "/signature-1":
			_, _ = w.Write([]byte{0x89, 0x01, 0xfe})
		case "/sigs/sha256=" + strings.Repeat("ab", 32) + "/signature-2":
			_, _ = w.Write([]byte("second"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	sigs, err := FetchReleaseSignatures(t.Context(), srv.Client(), srv.URL+"/sigs/", dig)
	if err != nil || len(sigs) != 2 {
		t.Fatalf("fetch: %v, %d signatures (want 2)", err, len(sigs))
	}
	dir := t.TempDir()
	files, err := WriteSignatureConfigMap(dir, []ReleaseSignatures{{Digest: dig, Signatures: sigs}})
	if err != nil {
		t.Fatal(err)
	}
	// oc-mirror v2's names: signature-configmap.yaml and .json, ConfigMap mirrored-release-signatures
	if len(files) != 2 || files[0] != "signature-configmap.yaml" || files[1] != "signature-configmap.json" {
		t.Fatalf("files %v, want oc-mirror's signature-configmap.yaml and .json", files)
	}
	var fromJSON struct {
		BinaryData map[string]string `json:"binaryData"`
	}
	if j, err := os.ReadFile(filepath.Join(dir, files[1])); err != nil || json.Unmarshal(j, &fromJSON) != nil || len(fromJSON.BinaryData) != 2 {
		t.Fatalf("signature-configmap.json: %v %+v", err, fromJSON)
	}
	b, _ := os.ReadFile(filepath.Join(dir, files[0]))
	var cm struct {
		Metadata struct {
			Name      string            `yaml:"name"`
			Namespace string            `yaml:"namespace"`
			Labels    map[string]string `yaml:"labels"`
		} `yaml:"metadata"`
		BinaryData map[string]string `yaml:"binaryData"`
	}
	if err := yaml.Unmarshal(b, &cm); err != nil {
		t.Fatal(err)
	}
	got, _ := base64.StdEncoding.DecodeString(cm.BinaryData["sha256-"+strings.Repeat("ab", 32)+"-1"])
	if cm.Metadata.Name != "mirrored-release-signatures" || cm.Metadata.Namespace != "openshift-config-managed" || len(got) != 3 || got[0] != 0x89 {
		t.Fatalf("configmap:\n%s", b)
	}
	if _, ok := cm.Metadata.Labels[SignatureLabel]; !ok {
		t.Fatalf("configmap lacks the %s label:\n%s", SignatureLabel, b)
	}
	if _, err := FetchReleaseSignatures(t.Context(), srv.Client(), srv.URL+"/sigs", "sha256:"+strings.Repeat("cd", 32)); err == nil {
		t.Fatal("a release without signatures must be an error")
	}
}
