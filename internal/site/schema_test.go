package site

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files and profiles/schema.json")

// TestSchemaUpToDate fails when profiles/schema.json no longer matches the Go types.
// Regenerate: go test ./internal/site -run TestSchemaUpToDate -update (or go generate ./internal/site).
func TestSchemaUpToDate(t *testing.T) {
	got, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "profiles", "schema.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run `go test ./internal/site -run TestSchemaUpToDate -update`", path)
	}
}

// TestSchemaShape checks the parts of the schema editors rely on.
func TestSchemaShape(t *testing.T) {
	b, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Defs map[string]struct {
			AdditionalProperties *bool                     `json:"additionalProperties"`
			Required             []string                  `json:"required"`
			Properties           map[string]map[string]any `json:"properties"`
			OneOf                []any                     `json:"oneOf"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	for name, d := range s.Defs {
		if d.AdditionalProperties == nil || *d.AdditionalProperties {
			t.Errorf("%s: additionalProperties must be false (strict decoding)", name)
		}
	}
	node := s.Defs["Node"]
	if !contains(node.Required, "rootDevice") || contains(node.Required, "gpu") {
		t.Errorf("Node.required = %v", node.Required)
	}
	if e, _ := node.Properties["role"]["enum"].([]any); len(e) != 2 {
		t.Errorf("Node.role enum = %v", node.Properties["role"]["enum"])
	}
	if d := s.Defs["Networking"].Properties["networkType"]["default"]; d != defaultNetworkType {
		t.Errorf("networkType default = %v", d)
	}
	if desc, _ := s.Defs["Cluster"].Properties["rendezvousIP"]["description"].(string); desc == "" {
		t.Error("rendezvousIP has no description from its doc comment")
	}
	up := s.Defs["Upgrade"].Properties
	if one, _ := up["maxUnavailable"]["oneOf"].([]any); len(one) != 2 || up["soak"]["default"] != DefaultUpgradeSoak || up["canaryPool"]["default"] != DefaultCanaryPool {
		t.Errorf("Upgrade: maxUnavailable %v (want an integer or a percent), soak default %v, canaryPool default %v", up["maxUnavailable"], up["soak"]["default"], up["canaryPool"]["default"])
	}
	if len(s.Defs["SecretRef"].OneOf) != 2 {
		t.Error("SecretRef must require exactly one of file or env")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
