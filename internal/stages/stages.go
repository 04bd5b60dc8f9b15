package stages

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/isoserver"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
)

// Info is one row of the stage table: everything about a stage that is not how it runs. The
// runner's stage list, the help text, --from/--until/--only completion, plan, the report and the
// README's stage table are all made from Table, in its order.
type Info struct {
	// Name is the stage's stable lower-case word (a CLI argument and a journal key).
	Name string
	// Summary is one line for help, plan and the report (the stage's Summary method).
	Summary string
	// Does is the README's description of the stage.
	Does string
	// Needs are the earlier stages whose journaled outputs the stage reads.
	Needs []string
	// NodeScoped says that the stage can act on some nodes only (replay --node).
	NodeScoped bool

	build func(iso *isoserver.Server) pipeline.Stage
}

// Table returns the stages in their fixed order.
func Table() []Info {
	return []Info{
		{Name: NamePreflight, NodeScoped: false,
			Summary: "read-only checks of the jump host, DNS, VIPs, NTP and referenced files",
			Does:    `proves the jump host, DNS, VIPs, NTP, files, registry and BMCs are ready (MACs checked against each BMC), and that the Git repository answers with the profile's CA and credentials and holds gitops.revision and gitops.path; changes nothing; runs on every pass`,
			build: func(iso *isoserver.Server) pipeline.Stage {
				return Preflight{More: []func(*pipeline.Env) []preflight.Check{MirrorPreflightChecks}}
			}},
		{Name: NameMirror, NodeScoped: false,
			Summary: "mirror the release, operator catalogs and images into the site registry; write IDMS/ITMS/CatalogSources",
			Does:    "copies the release payload, filtered operator catalogs and extra images into the local registry (deduplicated, resumable, SHA-256 verified); writes IDMS/ITMS/CatalogSources and `content.json`",
			build:   func(iso *isoserver.Server) pipeline.Stage { return Mirror{} }},
		{Name: NameISO, NodeScoped: false, Needs: []string{NameMirror},
			Summary: "render install-config, agent-config and day-1 manifests; build the agent ISO and per-node views",
			Does:    `writes install-config.yaml and agent-config.yaml (MACs, by-path root disks, nmstate), day-1 manifests (irdma blacklist, OperatorHub sources off, CatalogSources), builds the agent ISO and per-node views`,
			build:   func(iso *isoserver.Server) pipeline.Stage { return ISO{} }},
		{Name: NameBoot, NodeScoped: true, Needs: []string{NameISO},
			Summary: "boot every node from the agent ISO over Redfish virtual media (Dell iDRAC9 or generic Redfish), verified by read-back",
			Does:    "over Redfish (bmclib + a small Redfish client; Dell iDRAC9 or generic Redfish, chosen after discovery): eject, insert virtual media (action or PATCH), one-time boot from CD (a persistent one, taken off by install, where the BMC ignores Once), power-cycle; all nodes in parallel (up to 256), every step read back and journaled; a node is \"booted\" only on evidence (power Off→On, LastResetTime/BootProgress moved, the override consumed, its ISO read where served here), else \"booted, unverified: why\"; on a BMC that manages several systems `bmc.address` names the node's own (`https://host/redfish/v1/Systems/<id>`); a rerun boots again a node found off or without its ISO; `status` (text and `-o json`, per node `boot`: evidence or caveat) and the report show each node's verdict; each node's URL of the shared ISO served here carries its own token (`/n/<token>/…`, HMAC of its name under the work dir's random `iso-token.key`: no secret, different per site), so the ISO server attributes a read to its node even through NAT",
			build:   func(iso *isoserver.Server) pipeline.Stage { return Boot{Serve: ServeISO(iso), Evidence: iso.Evidence} }},
		{Name: NameInstall, NodeScoped: false, Needs: []string{NameISO, NameBoot},
			Summary: "follow the install (wait-for, rendezvous host validations), then check ClusterVersion, operators and nodes",
			Does:    "follows `openshift-install agent wait-for` and the rendezvous host's validations; gathers logs over SSH on failure; a node the rendezvous host has not seen 15 minutes after install starts (POST, live ISO boot and registration of a large server fit in it) stops the install, named with its boot caveat, what to check and `bootstrap replay boot --node NAME`",
			build:   func(iso *isoserver.Server) pipeline.Stage { return Install{Serve: ServeISO(iso)} }},
		{Name: NameConfigure, NodeScoped: false, Needs: []string{NameMirror, NameInstall},
			Summary: "apply mirror sets, catalogs, OperatorHub, CA trust and MachineConfigs; wait for catalogs and pools; verify the module blacklist",
			Does:    "server-side applies IDMS/ITMS, CatalogSources, CA trust, the irdma MachineConfig; waits for catalogs and pools; checks `irdma` is not loaded",
			build:   func(iso *isoserver.Server) pipeline.Stage { return Configure{} }},
		{Name: NameHandoff, NodeScoped: false, Needs: []string{NameMirror, NameInstall},
			Summary: "install OpenShift GitOps, add the repository and the root application, wait for Synced and Healthy",
			Does:    `proves the Git revision and path again, installs OpenShift GitOps from the mirrored catalog (approving a Manual InstallPlan), waits for the operator's ArgoCD instance, registers the Git repo, applies the root app and ApplicationSets, waits for Synced/Healthy, prints the Argo CD URL`,
			build:   func(iso *isoserver.Server) pipeline.Stage { return Handoff{} }},
	}
}

// Names returns the stage names in order.
func Names() []string {
	var out []string
	for _, i := range Table() {
		out = append(out, i.Name)
	}
	return out
}

// Lookup returns the table row of the named stage.
func Lookup(name string) (Info, bool) {
	t := Table()
	i := slices.IndexFunc(t, func(i Info) bool { return i.Name == name })
	if i < 0 {
		return Info{}, false
	}
	return t[i], true
}

// summary is the Summary of the named stage, from the table.
func summary(name string) string {
	i, _ := Lookup(name)
	return i.Summary
}

// All returns the pipeline's stages in their fixed order, with an ISO server of their own (for
// listing the stages; a command that runs them uses WithISOServer and owns the server).
func All() []pipeline.Stage { return WithISOServer(&isoserver.Server{}) }

// WithISOServer returns the pipeline's stages in the table's order, sharing iso: the boot stage
// and the install stage (nodes read their live ISO until they have written their disks) each
// make sure it serves, so a run resumed in install serves the ISO too; the boot stage takes its
// fetch log as the evidence that a node read its ISO after its power action. The caller owns
// iso and closes it when the process ends.
func WithISOServer(iso *isoserver.Server) []pipeline.Stage {
	var out []pipeline.Stage
	for _, i := range Table() {
		out = append(out, i.build(iso))
	}
	return out
}

// MarkdownTable renders the table as the README shows it: stage, what it does, what it needs,
// whether it can act on some nodes only.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| stage | does | needs | per node |\n|---|---|---|---|\n")
	for _, i := range Table() {
		needs, node := "—", ""
		if len(i.Needs) > 0 {
			needs = strings.Join(i.Needs, ", ")
		}
		if i.NodeScoped {
			node = "`--node`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", i.Name, i.Does, needs, node)
	}
	return b.String()
}
