// Package redirect is the redirect policy of every HTTP client that sends credentials (BMCs, the
// rendezvous API): a redirect may stay on the origin the request was sent to (same scheme, host
// and port) and nothing else. Go's own policy keeps an Authorization header across a redirect
// from https to http on the same host (Basic credentials then cross the network in clear) and
// keeps every other header (a Redfish session's X-Auth-Token) across hosts. A peer that redirects
// elsewhere is refused with both URLs named; nothing is sent there.
package redirect

import (
	"fmt"
	"net/http"
)

// maxRedirects is the most redirects followed, as net/http's default.
const maxRedirects = 10

// SameOrigin is an http.Client CheckRedirect: it refuses a redirect to another scheme, host or
// port (https to http in particular), and more than maxRedirects.
func SameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) == 0 {
		return nil
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	from, to := via[0].URL, req.URL
	switch {
	case from.Scheme == "https" && to.Scheme != "https":
		return fmt.Errorf("redirect from %s to %s refused: it downgrades https to %s, and the credentials would cross the network in clear",
			origin(from.Scheme, from.Host), origin(to.Scheme, to.Host), to.Scheme)
	case from.Scheme != to.Scheme || !sameHost(from.Host, to.Host, from.Scheme):
		return fmt.Errorf("redirect from %s to %s refused: the credentials for %s are not sent to another host or scheme; "+
			"point the profile at the address the peer redirects to, if it is the right one",
			origin(from.Scheme, from.Host), origin(to.Scheme, to.Host), origin(from.Scheme, from.Host))
	}
	return nil
}

// Client sets SameOrigin on c and returns it.
func Client(c *http.Client) *http.Client {
	c.CheckRedirect = SameOrigin
	return c
}

func origin(scheme, host string) string { return scheme + "://" + host }

// sameHost compares host[:port] with the scheme's default port filled in.
func sameHost(a, b, scheme string) bool {
	return withPort(a, scheme) == withPort(b, scheme)
}

func withPort(h, scheme string) string {
	for i := len(h) - 1; i >= 0 && h[i] != ']'; i-- {
		if h[i] == ':' {
			return h
		}
	}
	if scheme == "https" {
		return h + ":443"
	}
	return h + ":80"
}
