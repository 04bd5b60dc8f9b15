package agentiso

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// NodeCustomizations returns the per-node ISO customizations when iso.perNode is on.
func NodeCustomizations(s *site.Site) (map[string]Customization, error) {
	out := map[string]Customization{}
	if !s.ISO.PerNode {
		return out, nil
	}
	for i, n := range s.Nodes {
		c := Customization{KernelArgs: n.ISO.KernelArgs}
		if f := n.ISO.IgnitionFile; f != "" {
			if !filepath.IsAbs(f) && s.File != "" {
				f = filepath.Join(filepath.Dir(s.File), f)
			}
			data, err := fsroot.ReadFile(f, fsroot.Manifest)
			if err != nil {
				return nil, fmt.Errorf("nodes[%d].iso.ignitionFile: %w", i, err)
			}
			c.Ignition = data
		}
		if !c.Empty() {
			out[n.Name] = c
		}
	}
	return out, nil
}

// BaseURL is iso.baseURL, or the serve address when it is one a BMC can reach.
func BaseURL(s *site.Site) string {
	if s.ISO.BaseURL != "" {
		return s.ISO.BaseURL
	}
	scheme := "http"
	if s.ISO.TLSCert != "" {
		scheme = "https"
	}
	host, _, err := net.SplitHostPort(s.ISO.ServeAddress)
	if err != nil || host == "" || net.ParseIP(host).IsUnspecified() {
		return "" // URL rejects it, saying to set iso.baseURL
	}
	return (&url.URL{Scheme: scheme, Host: s.ISO.ServeAddress}).String()
}
