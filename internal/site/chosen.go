package site

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

// Chosen is a value bootstrap chose for a field the profile leaves out (SetDefaults), so that a
// user can tell which networks, platform and timeouts a run will use without reading the code.
type Chosen struct {
	// Path is the field path; "nodes[*].bmc.vendor" when it is the same for every node.
	Path  string `json:"path"`
	Value string `json:"value"`
	// Why says how the value was chosen when it depends on the rest of the profile.
	Why string `json:"why,omitempty"`
}

// String is "path: value (why)".
func (c Chosen) String() string {
	s := c.Path + ": " + c.Value
	if c.Why != "" {
		s += " (" + c.Why + ")"
	}
	return s
}

// Chosen lists, in document order, the values SetDefaults filled in for the fields the loaded
// document does not write. It is empty for a Site built in Go rather than loaded.
func (s *Site) Chosen() []Chosen {
	if s.pos == nil {
		return nil
	}
	var out []Chosen
	add := func(path, value, why string) {
		if value != "" && !s.written(path) {
			out = append(out, Chosen{Path: path, Value: value, Why: why})
		}
	}
	cl := s.Cluster
	n := cl.Networking
	fam := "the machine network's address families"
	add("cluster.release.architecture", cl.Release.Architecture, "")
	add("cluster.networking.networkType", n.NetworkType, "")
	var cns []string
	for _, c := range n.ClusterNetwork {
		cns = append(cns, fmt.Sprintf("%s hostPrefix %d", c.CIDR, c.HostPrefix))
	}
	add("cluster.networking.clusterNetwork", strings.Join(cns, ", "), fam)
	add("cluster.networking.serviceNetwork", strings.Join(n.ServiceNetwork, ", "), fam)
	if cl.Platform != "" {
		why := fmt.Sprintf("%d control-plane nodes: VIPs kept by the cluster", s.ControlPlaneCount())
		if cl.Platform == PlatformNone {
			why = "a single control-plane node"
		}
		add("cluster.platform", cl.Platform, why)
	}
	add("cluster.installer.bootstrapTimeout", cl.Installer.BootstrapTimeout, "")
	add("cluster.installer.installTimeout", cl.Installer.InstallTimeout, "")
	add("mirror.platforms", strings.Join(s.Mirror.Platforms, ", "), "the cluster's architecture")
	add("mirror.parallel", strconv.Itoa(s.Mirror.Parallel), "")
	add("iso.baseURL", s.ISO.BaseURL, "from iso.serveAddress")
	add("boot.parallel", strconv.Itoa(s.Boot.Parallel), "0: every node at once")
	add("boot.confirmTimeout", s.Boot.ConfirmTimeout, "")
	add("boot.resumeGrace", s.Boot.ResumeGrace, "")
	if d := s.Day1.DisableDefaultSources; d != nil {
		add("day1.disableDefaultSources", strconv.FormatBool(*d), "")
	}
	for i, bl := range s.Day1.ModuleBlacklist {
		if !s.written("day1.moduleBlacklist") {
			add(fmt.Sprintf("day1.moduleBlacklist[%d]", i), fmt.Sprintf("%s on pools %s", strings.Join(bl.Modules, ", "), strings.Join(bl.Pools, ", ")), "GPU nodes")
		}
	}
	g := s.GitOps
	add("gitops.channel", g.Channel, "")
	add("gitops.installPlanApproval", g.InstallPlanApproval, "")
	add("gitops.revision", g.Revision, "")
	add("gitops.path", g.Path, "")
	add("gitops.rootApp.name", g.RootApp.Name, "")
	add("gitops.rootApp.namespace", g.RootApp.Namespace, "")
	add("gitops.rootApp.project", g.RootApp.Project, "")
	add("gitops.timeout", g.Timeout, "")
	add("upgrade.soak", s.Upgrade.Soak, "")
	add("upgrade.canaryPool", s.Upgrade.CanaryPool, "")
	return out
}

// written reports whether the loaded document holds a value at path.
func (s *Site) written(path string) bool {
	_, ok := s.pos[path]
	return ok
}

// WrittenAt returns where the loaded document writes the value at a field path
// ("upgrade.soak"), in the file as named to Load; false when the document does not write it (a
// default filled it, or the Site was built in Go). A command that lets a flag override a field
// uses it to say where the value it used came from.
func (s *Site) WrittenAt(path string) (finding.Position, bool) {
	p, ok := s.pos[path]
	return p, ok
}
