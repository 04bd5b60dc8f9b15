package installercheck

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ignv32 "github.com/coreos/ignition/v2/config/v3_2/types"
	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/openshift/installer/pkg/types"
	"github.com/openshift/installer/pkg/types/agent"
	"sigs.k8s.io/yaml"
)

// golden is where internal/agentiso keeps what Render writes for each profile (TestRenderGolden
// there fails when the two differ, so checking the golden files checks the renderer).
const golden = "../testdata/golden"

var profiles = []string{"lab", "dell-xe7740-h200", "compact-3node", "sno"}

// check loads a directory the way `openshift-install agent create image` does: strict decoding
// (unknown fields fail here, where the installer would only warn), then the installer's asset
// graph through its asset store (assets_test.go): the installer's defaults, install-config
// validation for the agent method, agent-config validation, the hosts checks (MACs, interfaces,
// root device hints, roles, rendezvous host) and the cluster manifests it derives
// (AgentClusterInstall's network checks: hostPrefix, a cluster network big enough for the hosts;
// ClusterDeployment, InfraEnv, the pull secret, the release image set, registries.conf).
func check(t *testing.T, dir string) error {
	t.Helper()
	// no oc on PATH: the installer's release-architecture probe must not reach any registry
	t.Setenv("PATH", t.TempDir())
	icData, err := os.ReadFile(filepath.Join(dir, "install-config.yaml"))
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(icData, &types.InstallConfig{}, yaml.DisallowUnknownFields); err != nil {
		return err
	}
	acData, err := os.ReadFile(filepath.Join(dir, "agent-config.yaml"))
	if err != nil {
		return err
	}
	var ac agent.Config
	if err := yaml.UnmarshalStrict(acData, &ac, yaml.DisallowUnknownFields); err != nil {
		return err
	}
	return checkAssets(t, dir, len(ac.Hosts))
}

func TestGeneratedConfigsPassInstallerValidation(t *testing.T) {
	for _, p := range profiles {
		t.Run(p, func(t *testing.T) {
			if err := check(t, filepath.Join(golden, p)); err != nil {
				t.Fatalf("the installer rejects what bootstrap renders for %s: %v", p, err)
			}
		})
	}
}

// TestInstallerCheckCanFail proves the check rejects what the installer rejects.
func TestInstallerCheckCanFail(t *testing.T) {
	cases := map[string]struct {
		file, old, new, want string
	}{
		"unknown field":   {"install-config.yaml", "baseDomain:", "baseDomian: x\nbaseDomain:", "baseDomian"},
		"duplicate MAC":   {"agent-config.yaml", "c4:cb:e1:00:00:02", "c4:cb:e1:00:00:01", "duplicate"},
		"bad role":        {"agent-config.yaml", "role: worker", "role: gpu", "role"},
		"bad VIP":         {"install-config.yaml", "- 10.40.10.5", "- 10.99.0.5", "apiVIPs"},
		"bad pull secret": {"install-config.yaml", `pullSecret: '{"auths"`, `pullSecret: '{"nope"`, "pullSecret"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range []string{"install-config.yaml", "agent-config.yaml"} {
				data, err := os.ReadFile(filepath.Join(golden, "dell-xe7740-h200", f))
				if err != nil {
					t.Fatal(err)
				}
				if f == c.file {
					if !bytes.Contains(data, []byte(c.old)) {
						t.Fatalf("%s lacks %q", f, c.old)
					}
					data = bytes.Replace(data, []byte(c.old), []byte(c.new), 1)
				}
				os.WriteFile(filepath.Join(dir, f), data, 0o644)
			}
			err := check(t, dir)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to mention %q", err, c.want)
			}
		})
	}
}

// TestDay1ManifestsDecodeStrictly decodes the generated day-1 manifests into the OpenShift API
// types (and the MachineConfig's embedded Ignition into the 3.2 spec) with unknown fields refused.
func TestDay1ManifestsDecodeStrictly(t *testing.T) {
	seen := 0
	for _, p := range profiles {
		files, _ := filepath.Glob(filepath.Join(golden, p, "openshift", "*.yaml"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case bytes.Contains(data, []byte("kind: MachineConfig\n")):
				var mc mcfgv1.MachineConfig
				if err := yaml.UnmarshalStrict(data, &mc, yaml.DisallowUnknownFields); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				var ign ignv32.Config
				if err := yaml.UnmarshalStrict(mc.Spec.Config.Raw, &ign, yaml.DisallowUnknownFields); err != nil {
					t.Fatalf("%s: ignition: %v", f, err)
				}
				if ign.Ignition.Version != "3.2.0" || len(ign.Storage.Files) != 1 || len(mc.Spec.KernelArguments) != 1 ||
					!strings.HasPrefix(mc.Spec.KernelArguments[0], "module_blacklist=") {
					t.Fatalf("%s: %+v", f, mc.Spec)
				}
				if r := ign.Storage.Files[0].Contents.Source; r == nil || !strings.HasPrefix(*r, "data:,") {
					t.Fatalf("%s: file contents not a data URL", f)
				}
				seen++
			case bytes.Contains(data, []byte("kind: OperatorHub\n")):
				var oh configv1.OperatorHub
				if err := yaml.UnmarshalStrict(data, &oh, yaml.DisallowUnknownFields); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				if !oh.Spec.DisableAllDefaultSources {
					t.Fatalf("%s: default sources not disabled", f)
				}
				seen++
			}
		}
	}
	if seen < 5 {
		t.Fatalf("only %d day-1 manifests checked", seen)
	}
}
