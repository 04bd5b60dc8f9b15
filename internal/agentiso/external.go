package agentiso

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// ServedHere reports whether baseURL (iso.baseURL) points at the ISO server this process runs on
// serveAddress (iso.serveAddress): same port, and the URL's host is the serve host or — for a
// wildcard serve host — an address of this machine. Otherwise the ISO is served elsewhere (the
// site's web server): bootstrap then neither needs a local build nor starts a server, and
// preflight fetches the URL instead.
func ServedHere(serveAddress, baseURL string) bool {
	if baseURL == "" {
		return true
	}
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return true // not a URL a BMC can fetch; the boot stage says so
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	shost, sport, err := net.SplitHostPort(serveAddress)
	if err != nil || sport != port {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(shost, host) {
		return true
	}
	if ip, err := netip.ParseAddr(shost); shost != "" && (err != nil || !ip.IsUnspecified()) {
		return false
	}
	return isLocalHost(host)
}

// isLocalHost reports whether host (a name or an address) is an address of this machine.
func isLocalHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = append(ips, ip)
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		addrs, _ := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		ips = append(ips, addrs...)
	}
	local, _ := net.InterfaceAddrs()
	for _, ip := range ips {
		if ip.Unmap().IsLoopback() {
			return true
		}
		for _, a := range local {
			if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr() == ip.Unmap() {
				return true
			}
		}
	}
	return false
}

// ProbeISO fetches the ISO 9660 primary volume descriptor of the image at rawURL with a ranged
// GET, as a BMC's virtual media does, and checks it: the server answers 206 with the "CD001"
// magic. It is what preflight asks of an ISO served elsewhere.
func ProbeISO(ctx context.Context, rawURL string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Range", "bytes=32768-34815")
	hc := &http.Client{Transport: &http.Transport{Proxy: nil}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return err
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		return fmt.Errorf("the server ignored the Range header (HTTP 200): BMC virtual media read the ISO in ranges and need 206 answers")
	case resp.StatusCode != http.StatusPartialContent:
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	case len(data) < 6 || string(data[1:6]) != "CD001":
		return fmt.Errorf("no ISO 9660 volume descriptor at byte 32768: not an ISO image")
	}
	return nil
}
