package site

import (
	"net/url"
	"strings"
)

// URLs in a profile are printed (validate, preflight, the journal, reports): one holding
// credentials (https://user:pass@host) would put them in every output, and the client would
// send them on every request, redirects included. Credentials live in their own fields, read
// from a file or the environment at the moment of use.

// userinfo refuses a URL with user:password@ (or user@) in field, saying so without printing the
// URL, and reports whether it did.
func (c *checker) userinfo(field, raw string) bool {
	if !hasUserinfo(raw) {
		return false
	}
	c.err(field, "the URL carries credentials (user:password@ before the host): refused, as it would be printed and sent as it is",
		"remove them from the URL; a BMC's user and password go in bmc.username and bmc.password, a registry's in its auth file")
	return true
}

// hasUserinfo reports a userinfo part, also in a URL that does not parse.
func hasUserinfo(raw string) bool {
	if u, err := url.Parse(raw); err == nil {
		return u.User != nil
	}
	rest := raw
	if _, after, ok := strings.Cut(raw, "://"); ok {
		rest = after
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return strings.Contains(rest, "@")
}

// shownURL is raw for a message, with any userinfo cut out.
func shownURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		u.User = nil
		return u.String()
	}
	if hasUserinfo(raw) {
		return "(a URL with credentials)"
	}
	return raw
}
