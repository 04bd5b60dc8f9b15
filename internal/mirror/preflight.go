package mirror

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
	"github.com/regclient/regclient"
	"github.com/regclient/regclient/types/descriptor"
	"github.com/regclient/regclient/types/errs"
	"github.com/regclient/regclient/types/ref"
)

// RegistryError is a registry that cannot be used, with what to do about it. Callers branch on
// it (errors.As) to fail before copying anything.
type RegistryError struct {
	Host string
	Op   string // "reach", "tls", "auth", "push"
	Err  error
	// Chain describes the certificates the registry presented, when TLS verification failed.
	Chain  []string
	remedy string
}

// Remedy says what to fix (the project's remedy contract: the runner journals it and `bootstrap
// status` shows it).
func (e *RegistryError) Remedy() string { return e.remedy }

func (e *RegistryError) Error() string {
	s := fmt.Sprintf("registry %s: %s: %v", e.Host, e.Op, e.Err)
	if len(e.Chain) > 0 {
		s += "; presented chain: " + strings.Join(e.Chain, " <- ")
	}
	if e.remedy != "" {
		s += "; " + e.remedy
	}
	return s
}

func (e *RegistryError) Unwrap() error { return e.Err }

// checkDest pings the destination once, so that an untrusted certificate or refused credentials
// fail the run at once instead of after every blob has been retried.
func checkDest(ctx context.Context, rc *regclient.RegClient, o Options) error {
	r, err := ref.NewHost(o.Dest.Host)
	if err != nil {
		return &RegistryError{Host: o.Dest.Host, Op: "reach", Err: err, remedy: "give the registry as host[:port]"}
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = o.withRun().retry(pctx, []string{o.Dest.Host}, func(ctx context.Context) error {
		_, err := rc.Ping(ctx, r)
		return err
	})
	if err != nil {
		return classify(o.Dest.Endpoint(), "reach", err)
	}
	return nil
}

// Preflight proves the destination is usable before anything is copied: reachable, TLS trusted
// with the configured CA (on failure the presented chain is shown), credentials accepted, and
// push permission, proven by uploading a tiny scratch blob to NAMESPACE/bootstrap-preflight.
// It returns the first failing step as a *RegistryError.
func Preflight(ctx context.Context, o Options, namespace string) error {
	for _, c := range CheckDestination(ctx, o, namespace, true) {
		if c.Err != nil {
			return c.Err
		}
	}
	return nil
}

// Registry preflight steps, in the order they are proven.
const (
	StepReach = "reach"
	StepTLS   = "tls"
	StepAuth  = "auth"
	StepPush  = "push"
	StepRead  = "read"
)

// RegistryCheck is one proven (or disproven) step of a registry preflight.
type RegistryCheck struct {
	Step string // StepReach, StepTLS, StepAuth, StepPush, StepRead
	Host string
	// Image is the image read, for StepRead.
	Image string
	// Err is a *RegistryError (with the remedy and, for TLS, the presented chain) when the step
	// failed; nil when it passed or was not checked.
	Err error
	// Warning is set when the step passed with a caveat (TLS verification switched off).
	Warning string
	// NotChecked says an earlier step failed, so this one could not be proven.
	NotChecked bool
	Message    string
}

// CheckDestination proves the destination's steps in order: reachable, TLS trusted, credentials
// accepted and, when push is set, push permission (a scratch blob uploaded to
// NAMESPACE/bootstrap-preflight; registries garbage-collect unreferenced blobs). Steps after a
// failed one are returned NotChecked.
func CheckDestination(ctx context.Context, o Options, namespace string, push bool) []RegistryCheck {
	h := o.Dest.Host
	steps := []string{StepReach, StepTLS, StepAuth}
	if push {
		steps = append(steps, StepPush)
	}
	out := make([]RegistryCheck, len(steps))
	for i, s := range steps {
		out[i] = RegistryCheck{Step: s, Host: h}
	}
	// failAt records err at its step and marks the later steps not checked; the earlier ones pass.
	failAt := func(err error) []RegistryCheck {
		var re *RegistryError
		if !errors.As(err, &re) {
			re = &RegistryError{Host: h, Op: StepReach, Err: err}
		}
		failed := false
		for i := range out {
			switch {
			case failed:
				out[i].NotChecked = true
				out[i].Message = "not checked: " + re.Op + " failed"
			case out[i].Step == re.Op:
				out[i].Err, failed = re, true
			}
		}
		passMessages(out, o)
		return out
	}
	rc, err := newClient(o)
	if err != nil {
		return failAt(&RegistryError{Host: h, Op: StepReach, Err: err, remedy: "fix the registry's CA or auth file"})
	}
	if err := checkDest(ctx, rc, o); err != nil {
		return failAt(err)
	}
	if push {
		repo := "bootstrap-preflight"
		if ns := strings.Trim(namespace, "/"); ns != "" {
			repo = ns + "/" + repo
		}
		r, err := ref.New(h + "/" + repo)
		if err != nil {
			return failAt(&RegistryError{Host: h, Op: StepPush, Err: err, remedy: "check registry.namespace"})
		}
		data := []byte("bootstrap preflight scratch blob\n")
		d := descriptor.Descriptor{MediaType: "application/octet-stream", Digest: digest.FromBytes(data), Size: int64(len(data))}
		err = o.withRun().retry(ctx, []string{h}, func(ctx context.Context) error {
			_, err := rc.BlobPut(ctx, r, d, bytes.NewReader(data))
			return err
		})
		if err != nil {
			re := classify(o.Dest.Endpoint(), StepPush, err).(*RegistryError)
			if re.Op == StepAuth { // credentials accepted for reading (the ping passed), refused for pushing
				re.Op = StepPush
			}
			return failAt(re)
		}
	}
	passMessages(out, o)
	return out
}

// passMessages fills in the messages of the steps that passed.
func passMessages(out []RegistryCheck, o Options) {
	for i := range out {
		c := &out[i]
		if c.Err != nil || c.NotChecked {
			if c.Err != nil {
				c.Message = c.Err.Error()
			}
			continue
		}
		switch c.Step {
		case StepReach:
			c.Message = "answers the registry API at " + c.Host
		case StepTLS:
			if o.Dest.Insecure {
				c.Message = "TLS verification is off (insecure)"
				c.Warning = "TLS verification is off: a man in the middle could serve or capture images; give the registry's CA instead"
			} else if o.Dest.CAFile != "" {
				c.Message = "certificate trusted with " + o.Dest.CAFile
			} else {
				c.Message = "certificate trusted by the system roots"
			}
		case StepAuth:
			if o.Dest.AuthFile != "" {
				c.Message = "credentials from the auth file accepted"
			} else {
				c.Message = "no credentials needed to read"
			}
		case StepPush:
			c.Message = "scratch blob uploaded to the namespace"
		}
	}
}

// CheckSources proves the sources readable: for each source host, the first of images on it is
// looked up (a manifest HEAD, with the source settings and the source registry override), which
// proves reachability, trust and read credentials at once.
func CheckSources(ctx context.Context, o Options, images []string) []RegistryCheck {
	o = o.withRun()
	var out []RegistryCheck
	seen := map[string]bool{}
	var refs []ref.Ref
	var names []string
	for _, im := range images {
		r, err := readRef(im, o.SourceRegistry)
		if err != nil {
			out = append(out, RegistryCheck{Step: StepRead, Image: im, Err: err, Message: err.Error()})
			continue
		}
		if seen[r.Registry] {
			continue
		}
		seen[r.Registry] = true
		refs = append(refs, r)
		names = append(names, im)
	}
	hosts := make([]string, 0, len(refs))
	for _, r := range refs {
		hosts = append(hosts, r.Registry)
	}
	rc, err := newClient(o, hosts...)
	if err != nil {
		return append(out, RegistryCheck{Step: StepRead, Err: err, Message: err.Error()})
	}
	for i, r := range refs {
		c := RegistryCheck{Step: StepRead, Host: r.Registry, Image: names[i]}
		m, err := manifestHead(ctx, rc, o, r)
		if err != nil {
			e := o.Source
			e.Host = r.Registry
			re := classify(e, StepRead, err).(*RegistryError)
			if errors.Is(err, errs.ErrNotFound) {
				re.remedy = "the registry answers but has no " + names[i] + "; check the ImageSetConfiguration and mirror.source.registry"
			}
			c.Err, c.Message = re, re.Error()
		} else {
			c.Message = fmt.Sprintf("%s resolves to %s", names[i], m.GetDescriptor().Digest)
			if o.Source.Insecure {
				c.Warning = "TLS verification of the sources is off"
			}
		}
		out = append(out, c)
	}
	return out
}

// classify turns a registry error into a RegistryError with a remedy.
func classify(e Endpoint, op string, err error) error {
	re := &RegistryError{Host: e.Host, Op: op, Err: err}
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	switch {
	case errors.As(err, &ua) || errors.As(err, &hn) || strings.Contains(err.Error(), "x509:") || strings.Contains(err.Error(), "certificate"):
		if op == StepRead {
			re.remedy = "give the source registry's CA bundle (mirror.source.caFile / --src-ca-file)"
			re.Chain = presentedChain(e.Host)
			break
		}
		re.Op = "tls"
		re.Chain = presentedChain(e.Host)
		re.remedy = "give the registry's CA bundle (registry.caFile / --ca-file); skipping verification (insecure / --dest-tls-verify=false) is a last resort"
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		re.Op = "tls"
		re.remedy = "the registry speaks plain HTTP; serve it with TLS, or set insecure (--dest-tls-verify=false / --src-tls-verify=false) knowing that nothing is protected"
	case errors.Is(err, errs.ErrHTTPUnauthorized) || strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "unauthorized"):
		re.Op = "auth"
		re.remedy = "check the auth file (registry.authFile / --authfile) has an entry for " + e.Host + " with push rights"
	case strings.Contains(err.Error(), "403") || strings.Contains(err.Error(), "denied"):
		re.remedy = "the credentials are accepted but may not push here; grant write on the namespace"
	default:
		re.remedy = "check the registry runs and the host:port is right"
	}
	if op == StepRead {
		switch re.Op {
		case "auth":
			re.remedy = "check the source auth file (mirror.source.authFile / --authfile) has read credentials for " + e.Host
		case "tls":
			re.remedy = strings.Replace(re.remedy, "--dest-tls-verify=false / ", "", 1)
		}
		re.Op = StepRead
	}
	return re
}

// presentedChain dials the host and describes the certificates it presents (not verified: this
// only explains a verification failure).
func presentedChain(host string) []string {
	addr := host
	if _, _, err := net.SplitHostPort(host); err != nil {
		addr = net.JoinHostPort(host, "443")
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //#nosec G402 -- reading the chain to explain a failure, nothing is sent
	if err != nil {
		return nil
	}
	defer conn.Close()
	var out []string
	for _, c := range conn.ConnectionState().PeerCertificates {
		out = append(out, fmt.Sprintf("subject=%q issuer=%q notAfter=%s", c.Subject.String(), c.Issuer.String(), c.NotAfter.Format("2006-01-02")))
	}
	return out
}
