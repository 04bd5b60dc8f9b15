package agentiso

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/redact"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// The installer's own verdict at validate time. The installercheck module
// (internal/agentiso/installercheck, built by scripts/installercheck.sh into a test binary) loads
// a rendered install-config.yaml and agent-config.yaml through the agent installer's asset graph
// (install-config, agent-config, hosts, AgentClusterInstall, ClusterDeployment, InfraEnv, the pull
// secret, the release image set, registries.conf). InstallerCheck runs that binary on what Render
// writes for a profile and maps each refusal back to the profile field it comes from
// (InstallerFieldPaths), so validate can print it at file:line:col.

// InstallerCheckEnv names the check binary explicitly; InstallerCheckRoot is where
// scripts/installercheck.sh caches it (one directory per source state).
const (
	InstallerCheckEnv  = "BOOTSTRAP_INSTALLERCHECK_BIN"
	InstallerCheckRoot = "/var/cache/bootstrap/installercheck"
)

// FindInstallerCheck returns the check binary: $BOOTSTRAP_INSTALLERCHECK_BIN, else the newest
// installercheck.test under InstallerCheckRoot; "" when there is none.
func FindInstallerCheck(getenv func(string) string) string {
	if b := getenv(InstallerCheckEnv); b != "" {
		return b
	}
	bins, _ := filepath.Glob(filepath.Join(InstallerCheckRoot, "*", "installercheck.test"))
	var newest string
	var when time.Time
	for _, b := range bins {
		if fi, err := os.Stat(b); err == nil && fi.Mode().IsRegular() && fi.ModTime().After(when) {
			newest, when = b, fi.ModTime()
		}
	}
	return newest
}

// InstallerVerdict is the check binary's installer.json.
type InstallerVerdict struct {
	Verdict string `json:"verdict"` // accept or reject
	Error   string `json:"error,omitempty"`
}

// InstallerCheck renders s (nil mirror outputs: the mirror's sources do not change a verdict),
// runs the check binary bin on it and returns the installer's verdict. An error means the check
// could not be run, not that the installer refused.
func InstallerCheck(ctx context.Context, bin string, s *site.Site) (InstallerVerdict, error) {
	r, err := Render(RenderOptions{Site: s})
	if err != nil {
		return InstallerVerdict{}, fmt.Errorf("render for the installer's check: %w", err)
	}
	dir, err := os.MkdirTemp("", "bootstrap-installercheck-")
	if err != nil {
		return InstallerVerdict{}, err
	}
	defer os.RemoveAll(dir)
	for _, f := range r.Files {
		if f.Path == InstallConfigFile || f.Path == AgentConfigFile {
			if err := os.WriteFile(filepath.Join(dir, f.Path), f.Data, 0o600); err != nil {
				return InstallerVerdict{}, err
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run", "^TestCheckDir$", "-test.count=1")
	cmd.Env = append(os.Environ(), "BOOTSTRAP_INSTALLERCHECK_DIR="+dir)
	cmd.Dir = dir
	out, runErr := cmd.CombinedOutput()
	data, err := os.ReadFile(filepath.Join(dir, "installer.json"))
	if err != nil {
		return InstallerVerdict{}, fmt.Errorf("%s wrote no verdict (%v): %s", bin, runErr, tailLines(string(out), 5))
	}
	var v InstallerVerdict
	if err := json.Unmarshal(data, &v); err != nil || (v.Verdict != "accept" && v.Verdict != "reject") {
		return InstallerVerdict{}, fmt.Errorf("%s: unreadable verdict (%d bytes)", bin, len(data))
	}
	// The installer quotes a refused pull secret whole ("pullSecret: Invalid value: ..."): keep
	// the secret out of what validate prints.
	v.Error = pullSecretScrubber(s).String(v.Error)
	return v, nil
}

// pullSecretScrubber hides the pull secret Render writes into install-config.yaml: the whole
// JSON and each registry's auth.
func pullSecretScrubber(s *site.Site) *redact.Scrubber {
	sc := redact.New()
	ps, err := pullSecret(s)
	if err != nil || ps == "" {
		return sc
	}
	sc.Add(ps)
	var auths struct {
		Auths map[string]struct {
			Auth string `json:"auth"`
		} `json:"auths"`
	}
	if json.Unmarshal([]byte(ps), &auths) == nil {
		for _, a := range auths.Auths {
			sc.Add(a.Auth)
		}
	}
	return sc
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}

// installerPath finds the field paths in an installer error: the Kubernetes field.Error form
// "PATH: Invalid value: ...", as install-config, agent-config and the cluster manifests word them.
var installerPath = regexp.MustCompile(`([A-Za-z][A-Za-z0-9]*(?:\[\d+\])?(?:\.[A-Za-z][A-Za-z0-9]*(?:\[\d+\])?)*): (?:Invalid value|Required value|Unsupported value|Duplicate value|Forbidden|Too long|Too many|Not found|Internal error)`)

// installerFields maps an installer field path (install-config, agent-config or
// AgentClusterInstall) to the profile field Render writes it from, longest prefix first. $1 is the
// list index the installer names, when the pattern has one; "a|b" names every field Render
// builds the installer's field from (additionalTrustBundle holds the registry's CA and the
// day-1 trust bundles).
var installerFields = []struct {
	re   *regexp.Regexp
	site string
}{
	{regexp.MustCompile(`^(?:spec\.)?networking\.clusterNetwork\[(\d+)\]\.hostPrefix`), "cluster.networking.clusterNetwork[$1].hostPrefix"},
	{regexp.MustCompile(`^(?:spec\.)?networking\.clusterNetwork\[(\d+)\]`), "cluster.networking.clusterNetwork[$1].cidr"},
	{regexp.MustCompile(`^(?:spec\.)?networking\.clusterNetwork`), "cluster.networking.clusterNetwork"},
	{regexp.MustCompile(`^(?:spec\.)?networking\.serviceNetwork\[(\d+)\]`), "cluster.networking.serviceNetwork[$1]"},
	{regexp.MustCompile(`^(?:spec\.)?networking\.serviceNetwork`), "cluster.networking.serviceNetwork"},
	{regexp.MustCompile(`^(?:spec\.)?networking\.machineNetwork\[(\d+)\]`), "cluster.networking.machineNetwork[$1]"},
	{regexp.MustCompile(`^(?:spec\.)?networking\.machineNetwork`), "cluster.networking.machineNetwork"},
	{regexp.MustCompile(`^(?:spec\.)?networking\.networkType`), "cluster.networking.networkType"},
	{regexp.MustCompile(`^platform\.\w+\.apiVIPs?`), "cluster.apiVIPs"},
	{regexp.MustCompile(`^platform\.\w+\.ingressVIPs?`), "cluster.ingressVIPs"},
	{regexp.MustCompile(`^platform`), "cluster.platform"},
	{regexp.MustCompile(`^metadata\.name`), "cluster.name"},
	{regexp.MustCompile(`^baseDomain`), "cluster.baseDomain"},
	{regexp.MustCompile(`^sshKey`), "cluster.sshKeyFile"},
	{regexp.MustCompile(`^pullSecret`), "registry.authFile"},
	{regexp.MustCompile(`^additionalTrustBundle`), "registry.caFile|day1.trustBundles"},
	{regexp.MustCompile(`^proxy\.(httpProxy|httpsProxy|noProxy)`), "cluster.proxy.$1"},
	{regexp.MustCompile(`^proxy`), "cluster.proxy"},
	{regexp.MustCompile(`^capabilities\.(baselineCapabilitySet|additionalEnabledCapabilities)`), "cluster.capabilities.$1"},
	{regexp.MustCompile(`^capabilities`), "cluster.capabilities"},
	{regexp.MustCompile(`^cpuPartitioningMode`), "cluster.cpuPartitioningMode"},
	{regexp.MustCompile(`^(?:controlPlane|compute)`), "nodes"},
	{regexp.MustCompile(`^rendezvousIP`), "cluster.rendezvousIP"},
	{regexp.MustCompile(`^additionalNTPSources\[(\d+)\]`), "cluster.ntpSources[$1]"},
	{regexp.MustCompile(`^additionalNTPSources`), "cluster.ntpSources"},
	{regexp.MustCompile(`^(?i:hosts)\[(\d+)\]\.hostname`), "nodes[$1].name"},
	{regexp.MustCompile(`^(?i:hosts)\[(\d+)\]\.role`), "nodes[$1].role"},
	{regexp.MustCompile(`^(?i:hosts)\[(\d+)\]\.rootDeviceHints`), "nodes[$1].rootDevice"},
	{regexp.MustCompile(`^(?i:hosts)\[(\d+)\]\.interfaces\[(\d+)\]\.name`), "nodes[$1].interfaces[$2].name"},
	{regexp.MustCompile(`^(?i:hosts)\[(\d+)\]\.interfaces\[(\d+)\]`), "nodes[$1].interfaces[$2]|nodes[$1].bootMAC"},
	{regexp.MustCompile(`^(?i:hosts)\[(\d+)\]\.interfaces`), "nodes[$1].interfaces|nodes[$1].bootMAC"},
	{regexp.MustCompile(`^(?i:hosts)\[(\d+)\]\.networkConfig`), "nodes[$1].networkConfig"},
	{regexp.MustCompile(`^(?i:hosts)\[(\d+)\]`), "nodes[$1]"},
	{regexp.MustCompile(`^(?i:hosts)`), "nodes"},
}

// InstallerFieldPaths maps the field paths an installer error names to the profile's field paths,
// in the order the error names them, without duplicates. A path it cannot map is left out: the
// caller then points at the document.
func InstallerFieldPaths(msg string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range installerPath.FindAllStringSubmatch(msg, -1) {
		p := m[1]
		for _, f := range installerFields {
			idx := f.re.FindStringSubmatchIndex(p)
			if idx == nil {
				continue
			}
			for _, sp := range strings.Split(string(f.re.ExpandString(nil, f.site, p, idx)), "|") {
				if !seen[sp] {
					seen[sp] = true
					out = append(out, sp)
				}
			}
			break
		}
	}
	return out
}

// InstallerProblems turns a refusal into validate findings, one per profile field it names, each
// at that field's file:line:col; a refusal naming no field it knows is one finding at the
// document. The message is the installer's own.
func InstallerProblems(s *site.Site, v InstallerVerdict) finding.List {
	if v.Verdict != "reject" {
		return nil
	}
	paths := InstallerFieldPaths(v.Error)
	if len(paths) == 0 {
		paths = []string{""}
	}
	var ps finding.List
	for _, p := range paths {
		ps = append(ps, finding.Finding{
			Position: s.At(p), Path: p, Status: finding.Fail,
			Message: "the installer rejects it: " + v.Error,
			Remedy:  "change the field the installer names; `openshift-install agent create image` would refuse this profile",
		})
	}
	return ps
}
