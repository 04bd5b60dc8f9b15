package installercheck

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/openshift/installer/pkg/asset"
	"github.com/openshift/installer/pkg/asset/agent/agentconfig"
	"github.com/openshift/installer/pkg/asset/agent/manifests"
	"github.com/openshift/installer/pkg/asset/agent/mirror"
	"github.com/openshift/installer/pkg/asset/store"
)

// assetTargets are the assets of the agent installer's graph that `openshift-install agent create
// image` resolves before it writes the ISO, fetched through the installer's own asset store the
// way the command does (each target pulls in its parents: the agent workflow, the install-config
// and agent-config assets, the hosts). Left out, and why:
//   - NMStateConfig: it runs nmstatectl (a Rust binary not installed on this machine) before its
//     own checks, so here it can only fail with "install nmstate package"; bootstrap checks the
//     hosts' nmstate itself (internal/site/nmstate_rules.go);
//   - the ignition, the agent artifacts and the ISO: they read the release payload (oc adm release
//     extract against a registry), which a test here does not reach.
func assetTargets() []asset.Asset {
	return []asset.Asset{
		&agentconfig.AgentHosts{},
		&manifests.AgentPullSecret{},
		&manifests.ClusterImageSet{},
		&manifests.InfraEnv{},
		&manifests.AgentClusterInstall{},
		&manifests.ClusterDeployment{},
		&mirror.RegistriesConf{},
		&mirror.CaBundle{},
	}
}

// loadAssets resolves assetTargets for the rendered install-config.yaml and agent-config.yaml in
// dir, in a temporary copy of it (the store writes its state file there and removes the files it
// consumed, as the installer does in its asset directory). The first refusal is returned as the
// installer words it ("failed to fetch AgentClusterInstall Config: failed to generate asset ...:
// invalid NetworkType configured: spec.networking.clusterNetwork[0].hostPrefix: ...").
func loadAssets(t *testing.T, dir string) (asset.Store, error) {
	t.Helper()
	work := t.TempDir()
	for _, f := range []string{"install-config.yaml", "agent-config.yaml"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(work, f), data, 0o600); err != nil {
			return nil, err
		}
	}
	st, err := store.NewStore(work)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	for _, a := range assetTargets() {
		if err := st.Fetch(ctx, a); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// checkAssets is loadAssets and what it must have built: an AgentClusterInstall and a host per
// agent-config host. A rendered case that the installer accepts but that yields no cluster
// install would pass the corpus for the wrong reason.
func checkAssets(t *testing.T, dir string, wantHosts int) error {
	t.Helper()
	work, err := loadAssets(t, dir)
	if err != nil {
		return err
	}
	hosts, aci := &agentconfig.AgentHosts{}, &manifests.AgentClusterInstall{}
	if err := work.Fetch(context.Background(), hosts); err != nil {
		return err
	}
	if err := work.Fetch(context.Background(), aci); err != nil {
		return err
	}
	if len(hosts.Hosts) != wantHosts || wantHosts == 0 {
		t.Errorf("%s: the installer's asset graph has %d hosts, agent-config.yaml %d", dir, len(hosts.Hosts), wantHosts)
	}
	if aci.Config == nil || aci.File == nil || len(aci.File.Data) == 0 {
		t.Errorf("%s: the installer built no AgentClusterInstall", dir)
	}
	return nil
}
