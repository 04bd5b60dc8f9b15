package preflight

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso"
	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// serveChecks checks that the jump host can listen where the boot stage will serve the agent
// ISO to the BMCs. Listening and closing at once changes nothing.
func serveChecks(s *site.Site, o Options) []Check {
	addr := s.ISO.ServeAddress
	if !agentiso.ServedHere(addr, s.ISO.BaseURL) {
		return externalISOChecks(s, o)
	}
	if addr == "" {
		return nil
	}
	tls := s.ISO.TLSCert != ""
	return []Check{Func("iso serve address "+addr, CategoryJumpHost, func(ctx context.Context) finding.Finding {
		return checkListen(ctx, addr, tls)
	})}
}

func checkListen(ctx context.Context, addr string, tls bool) finding.Finding {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", addr)
	switch {
	case err == nil:
		l.Close()
		return finding.Passf("the jump host can listen on %s", addr)
	case errors.Is(err, syscall.EADDRINUSE):
		// `bootstrap serve` may hold it on purpose (the boot stage then leaves serving to it).
		if tls {
			return finding.Warnf("If `bootstrap serve` holds it, this is expected; otherwise stop what listens there or change iso.serveAddress.",
				"%s is taken (HTTPS: not probed)", addr)
		}
		if iso, ok := servesISO(ctx, addr); ok {
			return finding.Passf("%s already serves %s (bootstrap serve is running)", addr, iso)
		}
		return finding.Failf(fmt.Sprintf("Stop what listens on %s (ss -ltnp names it) or change iso.serveAddress.", addr),
			"%s is taken by another process, which does not serve the agent ISO", addr)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return finding.Failf("Set iso.serveAddress to an address of the jump host on the machine network (or 0.0.0.0:PORT).",
			"the jump host has no address %s", addr)
	case errors.Is(err, syscall.EACCES):
		return finding.Failf("Run bootstrap as root, or serve on a port of 1024 or more.", "not allowed to listen on %s", addr)
	}
	return finding.Failf("Fix iso.serveAddress (host:port).", "cannot listen on %s: %v", addr, err)
}

// externalISOChecks fetch, from the jump host, each distinct URL the BMCs will be given when the
// ISO is served by another web server (iso.baseURL): a ranged GET of the ISO 9660 descriptor, as
// the BMCs' virtual media will read it. Nobody else will serve it, so a miss is a failure.
func externalISOChecks(s *site.Site, o Options) []Check {
	urls := []string{bmcISOURL(s)}
	seen := map[string]bool{urls[0]: true}
	for _, n := range s.Nodes {
		if u := o.ISOURLs[n.Name]; u != "" && !seen[u] {
			seen[u] = true
			urls = append(urls, u)
		}
	}
	var out []Check
	for _, u := range urls {
		out = append(out, Func("iso url "+u, CategoryJumpHost, func(ctx context.Context) finding.Finding {
			if err := agentiso.ProbeISO(ctx, u, 5*time.Second); err != nil {
				return finding.Failf("Put the agent ISO (bootstrap run --until iso builds it) on the web server behind iso.baseURL, with range requests enabled, reachable from the jump host and the BMC network.",
					"the ISO served elsewhere at %s cannot be read: %v", u, err)
			}
			return finding.Passf("%s answers a ranged GET with an ISO 9660 image (served elsewhere: no local server needed)", u)
		}))
	}
	return out
}

// servesISO asks whatever holds addr for the agent ISO (HEAD, no body read) and reports whether
// it has it. A wildcard host is asked on loopback.
func servesISO(ctx context.Context, addr string) (string, bool) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", false
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	url := "http://" + net.JoinHostPort(host, port) + "/" + bmcISOName
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodHead, url, nil)
	if err != nil {
		return "", false
	}
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		return "", false
	}
	resp.Body.Close()
	return url, resp.StatusCode == http.StatusOK
}
