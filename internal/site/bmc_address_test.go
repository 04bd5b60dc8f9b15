package site

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBMCAddressSystemPath: a bmc.address may name the node's own System on a BMC that manages
// several (https://host/redfish/v1/Systems/<id>); any other path is refused with the two forms.
func TestBMCAddressSystemPath(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"https://10.0.0.200", true},
		{"https://10.0.0.200/", true},
		{"https://10.0.0.200:8000/redfish/v1/Systems/5b2e0f1c-0000-4e0b-9a51-00000000000c", true},
		{"https://10.0.0.200/redfish/v1/Systems/vm-c/", true},
		{"https://10.0.0.200/redfish/v1/Managers/vm-c", false},
		{"https://10.0.0.200/redfish/v1/Systems/vm-c/Bios", false},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			root := copyTestdata(t)
			t.Chdir(filepath.Join(root, "valid"))
			s, err := Load("site.yaml")
			if err != nil {
				t.Fatal(err)
			}
			s.Nodes[0].BMC.Address = tc.addr
			var found []string
			for _, p := range s.Validate(WithLookupEnv(testEnv)) {
				if p.Path == "nodes[0].bmc.address" {
					found = append(found, p.Message+" / "+p.Remedy)
				}
			}
			if tc.ok != (len(found) == 0) {
				t.Errorf("problems %v; want ok=%t", found, tc.ok)
			}
			if !tc.ok && !strings.Contains(strings.Join(found, ""), "/redfish/v1/Systems/<id>") {
				t.Errorf("remedy does not give the System form: %v", found)
			}
		})
	}
}
