package site

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// renderable holds the profile to what rendering install-config.yaml needs, so that `bootstrap
// validate` (exit 3, file:line:col) finds what `bootstrap iso` would otherwise refuse half-way:
// the VIP counts and the shape of the registry's auth file.
func (c *checker) renderable() {
	cl := c.s.Cluster
	if len(cl.APIVIPs) > 0 && len(cl.IngressVIPs) > 0 && len(cl.APIVIPs) != len(cl.IngressVIPs) {
		c.err("cluster.ingressVIPs", fmt.Sprintf("%d API VIPs and %d ingress VIPs: the cluster's Infrastructure validation would refuse it (number of API VIPs (%d) does not match number of Ingress VIPs (%d))",
			len(cl.APIVIPs), len(cl.IngressVIPs), len(cl.APIVIPs), len(cl.IngressVIPs)),
			"give one ingress VIP per API VIP: one of each per address family (two for dual-stack)")
	}
	c.registryAuth()
}

// registryAuth reads registry.authFile (a secret: only its shape is reported, never a value) and
// holds it to what the pull secret in install-config needs: an entry for registry.host, exactly
// as written there, with "auth" (base64 of user:password) or "credsStore" (the installer's
// validate.ImagePullSecret: "requires either auth or credsStore").
func (c *checker) registryAuth() {
	f, host := c.s.Registry.AuthFile, c.s.Registry.Host
	if f == "" || host == "" {
		return
	}
	if fi, err := os.Stat(f); err != nil || fi.Mode().Perm()&0o077 != 0 {
		return // missing, or readable by others: files() reports it; read it once it is private
	}
	data, ok := readContent(f)
	if !ok {
		return // not a regular file, or too large: files() reports it
	}
	const path = "registry.authFile"
	login := fmt.Sprintf("`podman login --authfile %s %s` writes it", f, host)
	var doc struct {
		Auths map[string]json.RawMessage `json:"auths"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		at := "it is not JSON"
		var se *json.SyntaxError
		if errors.As(err, &se) {
			at = fmt.Sprintf("JSON syntax error at byte %d", se.Offset) // the error's own text may quote a secret
		}
		c.err(path, fmt.Sprintf("%s is not a container auth file (%s)", f, at), "fix the file; "+login)
		return
	}
	entry, found := doc.Auths[host]
	if !found {
		c.err(path, fmt.Sprintf("%s has no entry for the mirror registry %q under \"auths\" (the pull secret keeps only that entry, under that exact name)", f, host),
			login+" (the entry's name must be registry.host as written, port included)")
		return
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(entry, &fields); err != nil {
		c.err(path, fmt.Sprintf("%s: the entry for %s is not a JSON object", f, host), "re-create it: "+login)
		return
	}
	if a, auth := fields["auth"]; !auth || string(a) == "null" {
		if cs, store := fields["credsStore"]; !store || string(cs) == "null" {
			c.err(path, fmt.Sprintf("%s: the entry for %s has no \"auth\": the installer says %q requires either auth or credsStore", f, host, host),
				"re-create it: "+login+" (it stores base64 of user:password as \"auth\")")
		}
	}
}
