package mirror

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/config"
	"github.com/regclient/regclient/scheme/ocidir"
	"github.com/regclient/regclient/scheme/reg"
	"github.com/regclient/regclient/types/ref"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
)

// newClient builds the regclient used for one operation. The destination, the source override and
// the given source hosts get explicit entries (so that --src-tls-verify=false can find out whether
// each speaks TLS at all); any other source host uses the source endpoint's settings as regclient's
// default host.
func newClient(o Options, sourceHosts ...string) (*regclient.RegClient, error) {
	// BlobGet holds a request slot until the body is closed: room for the transfers, the
	// resolution running beside them (o.Parallel each) and the puts and HEADs
	conc := int64(2*o.Parallel + 2)
	srcDef := config.Host{TLS: config.TLSEnabled, ReqConcurrent: conc, BlobMax: -1}
	if o.Source.Insecure {
		srcDef.TLS = config.TLSInsecure
	}
	if o.Source.CAFile != "" {
		pem, err := fsroot.ReadFile(o.Source.CAFile, fsroot.PEM)
		if err != nil {
			return nil, fmt.Errorf("source CA file: %w", err)
		}
		srcDef.RegCert = string(pem)
	}
	hosts := []config.Host{}
	if o.Dest.Host != "" {
		dst, err := hostConfig(o.Dest.Endpoint(), conc)
		if err != nil {
			return nil, fmt.Errorf("destination %s: %w", o.Dest.Host, err)
		}
		hosts = append(hosts, dst)
	}
	srcHosts := []string{}
	if o.SourceRegistry != "" {
		srcHosts = append(srcHosts, o.SourceRegistry)
	}
	if o.Source.Host != "" {
		srcHosts = append(srcHosts, o.Source.Host)
	}
	if o.SourceRegistry == "" {
		for _, h := range sourceHosts {
			if !contains(srcHosts, h) {
				srcHosts = append(srcHosts, h)
			}
		}
	}
	for _, h := range srcHosts {
		if h == o.Dest.Host {
			continue
		}
		e := o.Source
		e.Host = h
		hc, err := hostConfig(e, conc)
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", h, err)
		}
		hosts = append(hosts, hc)
	}
	if o.Source.AuthFile != "" {
		// credentials for sources that have no explicit entry come from the auth file
		auths, err := readAuthFile(o.Source.AuthFile)
		if err != nil {
			return nil, err
		}
		for h, c := range auths {
			if h == o.Dest.Host || contains(srcHosts, h) {
				continue
			}
			hc := srcDef
			hc.Name, hc.User, hc.Pass = h, c.user, c.pass
			hosts = append(hosts, hc)
		}
	}
	ropts := []regclient.Opt{
		regclient.WithConfigHostDefault(srcDef),
		regclient.WithConfigHost(hosts...),
		// Retries and backoff are ours, per operation (retry.go): regclient's are per host, so one
		// repository answering 500 would hold back every request to its registry. A retry limit
		// of 1 still lets regclient answer an auth challenge; the 1ns delay makes its host backoff
		// a no-op (a 429's Retry-After is still honoured for the host, which is what it asks).
		regclient.WithRegOpts(reg.WithRetryLimit(1), reg.WithDelay(time.Nanosecond, time.Nanosecond)),
		regclient.WithUserAgent("bootstrap-mirror"),
		// never garbage-collect a disk mirror's layout: its index lists only root manifests
		regclient.WithOCIDirOpts(ocidir.WithGC(false)),
	}
	if o.Log != nil {
		ropts = append(ropts, regclient.WithSlog(o.Log))
	}
	return regclient.New(ropts...), nil
}

// hostConfig turns an endpoint into a regclient host entry, reading the CA and auth files.
func hostConfig(e Endpoint, conc int64) (config.Host, error) {
	h := config.Host{Name: e.Host, Hostname: e.Host, TLS: config.TLSEnabled, ReqConcurrent: conc, BlobMax: -1}
	if e.Insecure {
		h.TLS = probeTLS(e.Host)
	}
	if e.CAFile != "" {
		pem, err := fsroot.ReadFile(e.CAFile, fsroot.PEM)
		if err != nil {
			return h, fmt.Errorf("CA file: %w", err)
		}
		h.RegCert = string(pem)
	}
	if e.AuthFile != "" {
		auths, err := readAuthFile(e.AuthFile)
		if err != nil {
			return h, err
		}
		if c, ok := auths[e.Host]; ok {
			h.User, h.Pass = c.user, c.pass
		}
	}
	return h, nil
}

// probeTLS decides, for an endpoint whose TLS is not verified, between https without verification
// and plain http: a TLS handshake that gets a non-TLS answer means plain http.
func probeTLS(host string) config.TLSConf {
	addr := host
	if _, _, err := net.SplitHostPort(host); err != nil {
		addr = net.JoinHostPort(host, "443")
	}
	d := &net.Dialer{Timeout: 3 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //#nosec G402 -- the user asked for no verification; this probe only detects the scheme
	if err == nil {
		_ = conn.Close()
		return config.TLSInsecure
	}
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) {
		return config.TLSDisabled
	}
	return config.TLSInsecure
}

type cred struct{ user, pass string }

// readAuthFile reads a containers/docker auth file. Values never leave this function except into
// the registry client.
func readAuthFile(path string) (map[string]cred, error) {
	b, err := fsroot.ReadFile(path, fsroot.Secret)
	if err != nil {
		return nil, fmt.Errorf("auth file: %w", err)
	}
	var f struct {
		Auths map[string]struct {
			Auth     string `json:"auth"`
			Username string `json:"username"`
			Password string `json:"password"`
		} `json:"auths"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("auth file %s: not a containers auth file: %w", path, err)
	}
	out := map[string]cred{}
	for h, a := range f.Auths {
		h = strings.TrimPrefix(strings.TrimPrefix(h, "https://"), "http://")
		h = strings.TrimSuffix(h, "/v1/")
		c := cred{user: a.Username, pass: a.Password}
		if a.Auth != "" {
			raw, err := base64.StdEncoding.DecodeString(a.Auth)
			if err != nil {
				return nil, fmt.Errorf("auth file %s: entry %q: auth is not base64", path, h)
			}
			u, p, ok := strings.Cut(string(raw), ":")
			if !ok {
				return nil, fmt.Errorf("auth file %s: entry %q: auth is not user:password", path, h)
			}
			c = cred{user: u, pass: p}
		}
		out[h] = c
	}
	return out, nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// hostsOf returns the registries of the images' sources.
func hostsOf(images []Image) []string {
	var out []string
	for _, im := range images {
		if r, err := ref.New(im.Source); err == nil && !contains(out, r.Registry) {
			out = append(out, r.Registry)
		}
	}
	return out
}

// sourceClient is a client for reading one source image and that image's reference.
func sourceClient(image string, o Options) (*regclient.RegClient, ref.Ref, error) {
	rc, err := newClient(o, hostsOf([]Image{{Source: image}})...)
	if err != nil {
		return nil, ref.Ref{}, err
	}
	r, err := readRef(image, o.SourceRegistry)
	if err != nil {
		return nil, ref.Ref{}, err
	}
	return rc, r, nil
}
