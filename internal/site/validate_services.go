package site

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

var (
	namespaceRE = regexp.MustCompile(`^[a-z0-9]+([._-][a-z0-9]+)*(/[a-z0-9]+([._-][a-z0-9]+)*)*$`)
	platformRE  = regexp.MustCompile(`^linux/(amd64|arm64|ppc64le|s390x)$`)
	moduleRE    = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	scpGitRE    = regexp.MustCompile(`^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^/].*$`) // git@host:org/repo.git
)

// hostPort checks "host" or "host:port" without a scheme or path.
func (c *checker) hostPort(path, v, example string) {
	if v == "" {
		return
	}
	if strings.Contains(v, "://") || strings.Contains(v, "/") {
		c.err(path, fmt.Sprintf("%q must be host[:port], without a scheme or path", v), "write it like "+example)
		return
	}
	host, port := v, ""
	if h, p, err := net.SplitHostPort(v); err == nil {
		host, port = h, p
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			c.err(path, fmt.Sprintf("port %q is not a port number", port), "write it like "+example)
			return
		}
	}
	if _, err := netip.ParseAddr(host); err != nil && !isDNSName(strings.ToLower(host)) {
		c.err(path, fmt.Sprintf("%q is not a host name or address", host), "write it like "+example)
	}
}

// ntpSource holds an NTP source to the installer's rule for agent-config additionalNTPSources
// (platform baremetal validation.ValidateNTPServers): an IP address or a lowercase RFC 1123
// domain name, nothing more. chrony always queries port 123, so there is no port to give.
//
// A loopback source (the lab's SNTP responder on an unprivileged port) is the exception: it is
// the jump host's alone, checked by preflight and never given to the nodes (on a node it would
// name the node itself), so it may carry a port.
func (c *checker) ntpSource(path, v string) {
	if net.ParseIP(v) != nil || subdomainProblem(strings.TrimSuffix(v, ".")) == "" {
		return
	}
	if IsLoopbackNTP(v) {
		c.hostPort(path, v, "127.0.0.1:12300")
		return
	}
	msg := fmt.Sprintf("%q: the installer rejects it as additionalNTPSources: NTP server is not a valid IP or domain name", v)
	if k8sSubdomain(strings.TrimSuffix(v, ".")) {
		// Only a label longer than 63 characters is wrong: the installer (Kubernetes' subdomain
		// rule) takes it, no DNS server can answer for it.
		msg = fmt.Sprintf("%q: %s; no resolver answers for such a name, so the nodes would have no time source (the installer does not check label lengths)",
			v, subdomainProblem(strings.TrimSuffix(v, ".")))
	}
	remedy := domainRemedy(v, "ntp1.site.example.com or 10.0.0.2")
	if strings.Contains(v, "/") {
		remedy = "write the server alone, without a scheme or path, e.g. ntp1.site.example.com or 10.0.0.2"
	} else if host, _, err := net.SplitHostPort(v); err == nil {
		remedy = fmt.Sprintf("drop the port: write %s (chrony always uses port 123)", host)
	}
	c.err(path, msg, remedy)
}

func (c *checker) registry() {
	r := c.s.Registry
	c.hostPort("registry.host", r.Host, "quay.site.example.com:8443")
	if host := hostOnly(r.Host); host != strings.ToLower(host) {
		// Stricter than openshift-install: the host is written as-is into the pull secret and
		// the mirror sets, which CRI-O matches by the string; one spelling avoids silent misses.
		c.err("registry.host", fmt.Sprintf("%q has upper-case letters: host names in the pull secret and image references must be lower case", r.Host),
			"write it in lower case: "+strings.ToLower(r.Host))
	}
	if r.Namespace != "" && !namespaceRE.MatchString(r.Namespace) {
		c.err("registry.namespace", fmt.Sprintf("%q is not a repository namespace", r.Namespace), "use lower-case path components, e.g. ocp/mirror")
	}
	if r.Insecure {
		c.warn("registry.insecure", "TLS verification of the mirror registry is off: image pulls and pushes can be intercepted",
			"give the registry's CA in registry.caFile instead")
	}
}

// IsLoopbackNTP reports whether an NTP source is a loopback address, with or without a port:
// a source for preflight on the jump host only, which the rendered agent-config leaves out.
func IsLoopbackNTP(v string) bool {
	a, err := netip.ParseAddr(hostOnly(v))
	return err == nil && a.IsLoopback()
}

// hostOnly returns the host of "host" or "host:port".
func hostOnly(v string) string {
	if h, _, err := net.SplitHostPort(v); err == nil {
		return h
	}
	return v
}

func (c *checker) mirror() {
	m := c.s.Mirror
	if m.Source.Registry != "" && m.Source.ArchiveDir != "" {
		c.err("mirror.source", "both registry and archiveDir are set", "keep registry (pull from a registry) or archiveDir (load a sneakernet archive), not both")
	}
	c.hostPort("mirror.source.registry", m.Source.Registry, "registry.connected.example.com:5000")
	if m.Source.Insecure {
		c.warn("mirror.source.insecure", "TLS verification of the source registry is off", "give the source registry's CA in mirror.source.caFile")
	}
	arch := "linux/" + c.s.Cluster.Release.Architecture
	all := slices.Contains(m.Platforms, "all")
	for i, p := range m.Platforms {
		switch {
		case p == "all" && len(m.Platforms) > 1:
			c.err(fmt.Sprintf("mirror.platforms[%d]", i), `"all" keeps every platform and cannot be combined with others`,
				`write platforms: [all] alone, or list the platforms to keep without "all"`)
		case p == "all":
		case !platformRE.MatchString(p):
			c.err(fmt.Sprintf("mirror.platforms[%d]", i), fmt.Sprintf("%q is not a platform", p), `write os/arch, e.g. linux/amd64, or [all] for every platform`)
		}
	}
	if len(m.Platforms) > 0 && !all && !slices.Contains(m.Platforms, arch) {
		c.err("mirror.platforms", fmt.Sprintf("the cluster's platform %s is not mirrored", arch), "add "+arch)
	}
	if m.Parallel < 1 || m.Parallel > 64 {
		c.err("mirror.parallel", fmt.Sprintf("parallel %d is out of range", m.Parallel), "use 1 to 64 (the default 12 suits a jump host with a few cores)")
	}
	if m.SignatureStore != "" && !c.userinfo("mirror.signatureStore", m.SignatureStore) {
		if u, err := url.Parse(m.SignatureStore); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			c.err("mirror.signatureStore", fmt.Sprintf("%q is not an http(s) URL", shownURL(m.SignatureStore)), "write the URL, e.g. https://mirror.openshift.com/pub/openshift-v4/signatures/openshift/release")
		}
	}
}

func (c *checker) iso() {
	s := c.s
	i := s.ISO
	if i.ServeAddress != "" {
		host, port, err := net.SplitHostPort(i.ServeAddress)
		n, perr := strconv.Atoi(port)
		if err != nil || perr != nil || n < 1 || n > 65535 {
			c.err("iso.serveAddress", fmt.Sprintf("%q is not address:port", i.ServeAddress), "write it like 10.0.0.5:8080 or 0.0.0.0:8080")
		} else if _, err := netip.ParseAddr(host); host != "" && err != nil && !isDNSName(strings.ToLower(host)) {
			c.err("iso.serveAddress", fmt.Sprintf("%q is not a host name or address", host), "write it like 10.0.0.5:8080")
		}
	}
	if i.BaseURL == "" && i.ServeAddress != "" {
		c.err("iso.baseURL", "the ISO URL cannot be derived from a wildcard listen address", "set iso.baseURL to the URL the BMCs reach this host at, e.g. http://10.0.0.5:8080")
	} else if i.BaseURL != "" && !c.userinfo("iso.baseURL", i.BaseURL) {
		if u, err := url.Parse(i.BaseURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			c.err("iso.baseURL", fmt.Sprintf("%q is not an http(s) URL", shownURL(i.BaseURL)), "write it like http://10.0.0.5:8080")
		} else if i.TLSCert != "" && u.Scheme != "https" {
			c.warn("iso.baseURL", "the ISO server has a TLS certificate but the BMCs are sent to an http:// URL", "use https:// in iso.baseURL")
		}
	}
	if (i.TLSCert == "") != (i.TLSKey == "") {
		c.err("iso.tlsCert", "tlsCert and tlsKey go together", "set both, or neither for plain HTTP")
	}
	if !i.PerNode {
		for j, n := range s.Nodes {
			if len(n.ISO.KernelArgs) > 0 || n.ISO.IgnitionFile != "" {
				c.warn(fmt.Sprintf("nodes[%d].iso", j), "per-node ISO settings are ignored unless iso.perNode is true", "set `perNode: true` under iso")
			}
		}
	}
}

func (c *checker) day1() {
	s := c.s
	pools := map[string]int{RoleMaster: s.ControlPlaneCount(), RoleWorker: s.WorkerCount()}
	for i, b := range s.Day1.ModuleBlacklist {
		p := fmt.Sprintf("day1.moduleBlacklist[%d]", i)
		for j, m := range b.Modules {
			if !moduleRE.MatchString(m) {
				c.err(fmt.Sprintf("%s.modules[%d]", p, j), fmt.Sprintf("%q is not a kernel module name", m), "write the module name as lsmod shows it, e.g. irdma")
			}
		}
		for j, pool := range b.Pools {
			pp := fmt.Sprintf("%s.pools[%d]", p, j)
			switch n, known := pools[pool]; {
			case !isDNSLabel(pool):
				c.err(pp, fmt.Sprintf("%q is not a MachineConfigPool name", pool), "use worker or master")
			case known && n == 0 && pool == RoleWorker:
				c.warn(pp, "no node has role worker, so the worker pool is empty and this blacklist applies to no node",
					"in compact and single-node clusters use pool master")
			}
		}
	}
}

func (c *checker) gitops() {
	g := c.s.GitOps
	ssh := false
	if g.RepoURL != "" {
		u, err := url.Parse(g.RepoURL)
		switch {
		case scpGitRE.MatchString(g.RepoURL):
			ssh = true
		case err == nil && u.Scheme == "ssh" && u.Host != "":
			ssh = true
		case err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "":
			if u.User != nil {
				c.err("gitops.repoURL", "the repository URL carries credentials", "remove them from the URL and use gitops.credentials (a file or env reference)")
			}
			if u.Scheme == "http" {
				c.warn("gitops.repoURL", "the Git repository is reached over plain HTTP", "use https://")
			}
		default:
			c.err("gitops.repoURL", fmt.Sprintf("%q is not a Git URL", g.RepoURL), "write https://git.example.com/org/repo.git or git@git.example.com:org/repo.git")
		}
	}
	cr := g.Credentials
	httpsCreds := cr.Username != "" || !cr.Password.IsZero()
	sshCreds := cr.SSHKeyFile != "" || cr.KnownHostsFile != ""
	switch {
	case httpsCreds && sshCreds:
		c.err("gitops.credentials", "both HTTPS (username/password) and SSH (sshKeyFile) credentials are set", "keep the kind that matches repoURL")
	case ssh && httpsCreds:
		c.err("gitops.credentials", "repoURL is an SSH URL but the credentials are username/password", "use sshKeyFile and knownHostsFile, or an https:// repoURL")
	case !ssh && g.RepoURL != "" && sshCreds:
		c.err("gitops.credentials", "repoURL is an HTTPS URL but the credentials are an SSH key", "use username and password (a token), or an SSH repoURL")
	case httpsCreds && (cr.Username == "" || cr.Password.IsZero()):
		c.err("gitops.credentials", "HTTPS credentials need both username and password", "set username and `password: {file: ...}` or `{env: ...}` (a token works as the password)")
	case sshCreds && cr.SSHKeyFile == "":
		c.err("gitops.credentials.sshKeyFile", "knownHostsFile is set without an SSH key", "set sshKeyFile to the deploy key's private key")
	}
	if ssh && cr.SSHKeyFile != "" && cr.KnownHostsFile == "" {
		c.err("gitops.credentials.knownHostsFile", "SSH host keys are verified, so a known_hosts file is needed",
			"write one (ssh-keyscan HOST > known_hosts, then compare the fingerprint out of band) and set knownHostsFile")
	}
	if !cr.Password.IsZero() {
		c.secretRef("gitops.credentials.password", cr.Password)
	}
	if g.InstallPlanApproval != "" && g.InstallPlanApproval != "Automatic" && g.InstallPlanApproval != "Manual" {
		c.err("gitops.installPlanApproval", fmt.Sprintf("%q is not Automatic or Manual", g.InstallPlanApproval), "use Automatic or Manual")
	}
	for _, f := range []struct{ path, v string }{{"gitops.rootApp.name", g.RootApp.Name}, {"gitops.rootApp.namespace", g.RootApp.Namespace}} {
		if f.v != "" && !isDNSLabel(f.v) {
			c.err(f.path, fmt.Sprintf("%q is not a Kubernetes name", f.v), "use lower-case letters, digits and '-'")
		}
	}
	c.duration("gitops.timeout", g.Timeout)
}

func (c *checker) boot() {
	b := c.s.Boot
	if b.Parallel < 0 || b.Parallel > 256 {
		c.err("boot.parallel", fmt.Sprintf("parallel %d is out of range", b.Parallel),
			"use 0 to 256: 0 (the default) boots every node at once")
	}
	c.duration("boot.confirmTimeout", b.ConfirmTimeout)
	c.duration("boot.resumeGrace", b.ResumeGrace)
	if d, err := time.ParseDuration(b.ResumeGrace); err == nil && d > 0 && d < 10*time.Second {
		c.warn("boot.resumeGrace", fmt.Sprintf("%s is shorter than a server takes to start booting", d),
			"keep it at 2m or more on real hardware: a resumed run that gives up watching too early may power-cycle a node a second time")
	}
}
