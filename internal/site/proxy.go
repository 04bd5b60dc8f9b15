package site

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// Proxy is the cluster's egress proxy, install-config's proxy section. A disconnected site
// usually needs none: its mirror registry is local. Telco and GPU sites that reach an on-site
// service (a vendor license server, a model store) through a proxy set it here.
//
// noProxy lists what the nodes reach directly: IP addresses, CIDRs and domain names (".example.com"
// matches its subdomains), or "*" alone. The cluster adds these itself (the cluster network
// operator's Proxy status, and the agent installer for the install), so they need not be listed:
// localhost, 127.0.0.1, .svc, .cluster.local, api-int.<cluster>.<baseDomain>, every machine,
// cluster and service network, and the rendezvous IP. The mirror registry is not among them:
// when the proxy cannot reach it, list registry.host's name here.
type Proxy struct {
	HTTPProxy  string   `yaml:"httpProxy,omitempty" json:"httpProxy,omitempty"`   // http://host:port
	HTTPSProxy string   `yaml:"httpsProxy,omitempty" json:"httpsProxy,omitempty"` // http:// or https://host:port
	NoProxy    []string `yaml:"noProxy,omitempty" json:"noProxy,omitempty"`
}

// IsSet reports whether any proxy field is set.
func (p Proxy) IsSet() bool { return p.HTTPProxy != "" || p.HTTPSProxy != "" || len(p.NoProxy) > 0 }

// proxy holds the proxy section to the installer's validateProxy: httpProxy or httpsProxy, each a
// URL of the allowed schemes whose address is in no cluster or service network, noProxy entries
// that are an IP, a CIDR or a domain without wildcards. bootstrap also refuses credentials in the
// URLs (the profile, the journal and install-config would carry them) and warns when the mirror
// registry would be reached through the proxy.
func (c *checker) proxy() {
	p := c.s.Cluster.Proxy
	if !p.IsSet() {
		return
	}
	const base = "cluster.proxy"
	if p.HTTPProxy == "" && p.HTTPSProxy == "" {
		c.err(base, "noProxy without a proxy: the installer says must include httpProxy or httpsProxy",
			"add `httpProxy: http://PROXY:PORT` (and httpsProxy), or remove the proxy section")
	}
	c.proxyURL(base+".httpProxy", p.HTTPProxy, "http")
	c.proxyURL(base+".httpsProxy", p.HTTPSProxy, "http", "https")
	for i, v := range p.NoProxy {
		path := fmt.Sprintf("%s.noProxy[%d]", base, i)
		switch {
		case v == "*":
			if len(p.NoProxy) > 1 {
				c.err(path, `"*" with other entries: "*" alone means no proxy for anything`, `keep "*" alone, or list the hosts and networks without it`)
			}
		case strings.ContainsAny(v, " ,"):
			c.err(path, fmt.Sprintf("%q holds a space or a comma: the installer says noProxy must not have spaces", v), "write one host, domain or CIDR per list entry")
		case !noProxyEntry(v):
			c.err(path, fmt.Sprintf("%q: the installer says each element of noProxy must be a IP, CIDR or domain without wildcard characters", v),
				`write an address (10.0.0.5), a CIDR (10.0.0.0/24) or a domain (.example.com for every name under it; no "*.")`)
		}
	}
	if host := hostOnly(c.s.Registry.Host); host != "" && !noProxyCovers(p.NoProxy, host) && !c.inMachineNetwork(host) {
		c.warn(base+".noProxy", fmt.Sprintf("the mirror registry %s is not in noProxy: the nodes pull every image through the proxy", host),
			fmt.Sprintf("add %s to noProxy unless the proxy serves it", host))
	}
}

// proxyURL checks one proxy URL the way the installer's validateURI does (url.ParseRequestURI and
// the scheme), plus a host and no credentials.
func (c *checker) proxyURL(path, v string, schemes ...string) {
	if v == "" {
		return
	}
	u, err := url.ParseRequestURI(v)
	if err != nil {
		c.err(path, fmt.Sprintf("%q is not a URL: the installer rejects it (%v)", v, errText(err)), fmt.Sprintf("write it as %s://PROXY:PORT", schemes[0]))
		return
	}
	if u.User != nil {
		// Never echo the URL: it holds a password.
		c.err(path, "the proxy URL carries credentials: the profile, the journal and install-config.yaml would hold them",
			"let the proxy admit the machine network by address, and write the URL without user:password@")
		return
	}
	ok := false
	for _, s := range schemes {
		ok = ok || u.Scheme == s
	}
	if !ok {
		c.err(path, fmt.Sprintf("scheme %q: the installer says Unsupported value: %q: supported values: %s", u.Scheme, u.Scheme, quoteAll(schemes)),
			fmt.Sprintf("write it as %s://%s", schemes[0], u.Host))
		return
	}
	if u.Hostname() == "" {
		c.err(path, fmt.Sprintf("%q names no proxy host", v), fmt.Sprintf("write it as %s://PROXY:PORT", schemes[0]))
		return
	}
	ip, err := netip.ParseAddr(u.Hostname())
	if err != nil {
		return
	}
	for i, cn := range c.s.Cluster.Networking.ClusterNetwork {
		if p, err := netip.ParsePrefix(cn.CIDR); err == nil && p.Contains(ip) {
			c.err(path, fmt.Sprintf("%s is in cluster.networking.clusterNetwork[%d]: the installer says proxy value is part of the cluster networks", ip, i), "use the proxy's address on the machine network")
		}
	}
	for i, sn := range c.s.Cluster.Networking.ServiceNetwork {
		if p, err := netip.ParsePrefix(sn); err == nil && p.Contains(ip) {
			c.err(path, fmt.Sprintf("%s is in cluster.networking.serviceNetwork[%d]: the installer says proxy value is part of the service networks", ip, i), "use the proxy's address on the machine network")
		}
	}
}

// errText is a url error without the URL it quotes.
func errText(err error) string {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err.Error()
	}
	return err.Error()
}

func quoteAll(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

// noProxyEntry is the installer's rule for one noProxy element: an IP, a CIDR, or a domain
// (validate.NoProxyDomainName: a subdomain after an optional leading '.').
func noProxyEntry(v string) bool {
	if _, err := netip.ParseAddr(v); err == nil {
		return true
	}
	if _, err := netip.ParsePrefix(v); err == nil {
		return true
	}
	return k8sSubdomain(strings.TrimPrefix(v, "."))
}

// noProxyCovers reports whether a noProxy list bypasses the proxy for host.
func noProxyCovers(list []string, host string) bool {
	ip, ipErr := netip.ParseAddr(host)
	for _, v := range list {
		switch {
		case v == "*", v == host:
			return true
		case strings.HasPrefix(v, ".") && (strings.HasSuffix(host, v) || host == v[1:]):
			return true
		case ipErr == nil:
			if p, err := netip.ParsePrefix(v); err == nil && p.Contains(ip) {
				return true
			}
		}
	}
	return false
}

// inMachineNetwork reports whether host is an address in a machine network (the cluster adds
// those to noProxy itself).
func (c *checker) inMachineNetwork(host string) bool {
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	for _, m := range c.s.Cluster.Networking.MachineNetwork {
		if p, err := netip.ParsePrefix(m); err == nil && p.Contains(ip) {
			return true
		}
	}
	return false
}
