package site

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

// Option adjusts Validate.
type Option func(*options)

type options struct {
	missingFilesAsWarnings bool
	refusePlaceholders     bool
	lookupEnv              func(string) (string, bool)
}

// MissingFilesAsWarnings reports referenced files that do not exist as warnings instead of
// errors. It is for reviewing a profile away from the jump host (the example profiles, CI, a
// laptop); a file that exists is still checked in full (kind, and mode for secrets).
func MissingFilesAsWarnings() Option {
	return func(o *options) { o.missingFilesAsWarnings = true }
}

// WithLookupEnv replaces os.LookupEnv for checking that secret environment variables are set.
func WithLookupEnv(f func(string) (string, bool)) Option {
	return func(o *options) { o.lookupEnv = f }
}

// checker collects the problems of one Validate call.
type checker struct {
	s     *Site
	o     options
	probs finding.List
	// Facts gathered once and shared by the checks.
	nodeIPs   map[string]ipOwner // static address → who has it
	nodeAddrs map[int][]nmAddr   // node index → its static addresses
}

func (c *checker) add(sev finding.Status, path, msg, remedy string) {
	c.probs = append(c.probs, finding.Finding{Position: c.s.At(path), Path: path, Status: sev, Message: msg, Remedy: remedy})
}

func (c *checker) err(path, msg, remedy string)  { c.add(finding.Fail, path, msg, remedy) }
func (c *checker) warn(path, msg, remedy string) { c.add(finding.Warn, path, msg, remedy) }

// Validate checks the whole profile and returns every problem at once, errors and warnings,
// sorted by position. It reads only password and token files and variables (to refuse short
// ones), the SSH public key and the trust bundles (the content install-config carries) and the
// registry auth file's shape (never a value from it); other files are only stat'ed. Call it after Load (defaults
// applied, paths resolved). Use finding.List.Err to get an *Errors when any problem is an error.
func (s *Site) Validate(opts ...Option) finding.List {
	c := &checker{s: s, o: options{lookupEnv: os.LookupEnv}}
	for _, o := range opts {
		o(&c.o)
	}
	c.required(reflect.ValueOf(s).Elem(), "")
	c.header()
	c.cluster()
	c.nodes() // before networks: gathers the nodes' static addresses
	c.networks()
	c.proxy()
	c.capabilities()
	c.cpuPartitioning()
	c.registry()
	c.mirror()
	c.iso()
	c.boot()
	c.day1()
	c.gitops()
	c.upgrade()
	c.files()
	c.contents()
	c.renderable()
	c.placeholders()
	return folded(unique(c.probs))
}

// requiredHints are remedies for required fields that need more than "add it".
var requiredHints = map[string]string{
	"apiVersion":                        "add `apiVersion: " + APIVersion + "` as the first line",
	"kind":                              "add `kind: " + Kind + "`",
	"cluster.rendezvousIP":              "set it to the static address of one control-plane node (from its networkConfig)",
	"cluster.sshKeyFile":                "point it at an SSH public key (ssh-keygen -t ed25519 -f ssh/id_ed25519)",
	"cluster.release.version":           "set the OpenShift version to install, e.g. 4.18.12",
	"mirror.imageSetConfig":             "point it at an oc-mirror v2 ImageSetConfiguration file",
	"iso.serveAddress":                  "set the address:port the jump host serves the ISO on, e.g. 10.0.0.5:8080",
	"nodes[*].bmc.password":             "reference the BMC password: `password: {file: secrets/bmc-password}` or `{env: BMC_PASSWORD}`",
	"nodes[*].rootDevice":               "use the install disk's /dev/disk/by-path name (iDRAC → Storage → Physical Disks shows the slot)",
	"nodes[*].bootMAC":                  "set the MAC address of the NIC the node boots and installs from",
	"gitops.repoURL":                    "set the Git repository Argo CD syncs the cluster from",
	"cluster.networking.machineNetwork": "list the CIDR the nodes' addresses are in, e.g. [10.0.0.0/24]",
}

var indexRE = regexp.MustCompile(`\[\d+\]`)

// required reports every field without omitempty in its yaml tag that is empty. An empty
// section is reported once, not field by field.
func (c *checker) required(v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			c.required(v.Elem(), path)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			c.required(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("yaml")
			name, opts, _ := strings.Cut(tag, ",")
			if !f.IsExported() || name == "-" || f.Type.Kind() == reflect.Map {
				continue
			}
			fv, fpath := v.Field(i), joinPath(path, name)
			// A section left out of the document counts as missing even when defaults filled
			// part of it (gitops without repoURL is reported as "gitops", not "gitops.repoURL").
			absent := fv.Kind() == reflect.Struct && c.s.pos != nil && !c.written(fpath)
			if !strings.Contains(opts, "omitempty") && (isEmpty(fv) || absent) {
				hint := requiredHints[indexRE.ReplaceAllString(fpath, "[*]")]
				if hint == "" {
					hint = fmt.Sprintf("add `%s:` here", name)
				}
				c.err(fpath, fmt.Sprintf("required field %q is missing", name), hint)
				continue
			}
			c.required(fv, fpath)
		}
	}
}

// written reports whether the document holds a value at path.
func (c *checker) written(path string) bool {
	_, ok := c.s.pos[path]
	return ok
}

func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.Map:
		return v.Len() == 0
	}
	return v.IsZero()
}

func (c *checker) header() {
	s := c.s
	if s.APIVersion != "" && s.APIVersion != APIVersion {
		c.err("apiVersion", fmt.Sprintf("apiVersion %q is not supported", s.APIVersion),
			"use `apiVersion: "+APIVersion+"`")
	}
	if s.Kind != "" && s.Kind != Kind {
		c.err("kind", fmt.Sprintf("kind %q is not a site profile", s.Kind), "use `kind: "+Kind+"`")
	}
	if n := s.Metadata.Name; n != "" && !isDNSLabel(n) {
		c.err("metadata.name", fmt.Sprintf("%q is not a DNS label", n),
			"use lower-case letters, digits and '-', at most 63 characters, e.g. "+suggestLabel(n))
	}
}

var (
	dnsLabelRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	envNameRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

func isDNSLabel(s string) bool { return dnsLabelRE.MatchString(s) }

func isDNSName(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if !isDNSLabel(l) {
			return false
		}
	}
	return true
}

// maxClusterName is the installer's limit on metadata.name (validate.ClusterName): a DNS label
// (63) less the nine characters of "\052.apps" in the DNS records.
const maxClusterName = 63 - 9

var subdomainRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// subdomainProblem says, in the installer's words (Kubernetes' IsDNS1123Subdomain, which the
// installer's validate.DomainName calls), why v is not a lowercase RFC 1123 subdomain; "" when it
// is one. It also holds each label to 63 characters, as DNS does (Kubernetes does not).
func subdomainProblem(v string) string {
	switch {
	case len(v) > 253:
		return "must be no more than 253 characters"
	case !subdomainRE.MatchString(v):
		return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', " +
			"and must start and end with an alphanumeric character"
	}
	for _, l := range strings.Split(v, ".") {
		if len(l) > 63 {
			return fmt.Sprintf("the label %q is longer than 63 characters", l)
		}
	}
	return ""
}

// k8sSubdomain is Kubernetes' IsDNS1123Subdomain, which the installer applies: no per-label limit.
func k8sSubdomain(v string) bool { return len(v) <= 253 && subdomainRE.MatchString(v) }

// domainRemedy suggests the lower-case spelling of a name when that is all that is wrong.
func domainRemedy(v, example string) string {
	if l := strings.ToLower(strings.TrimSuffix(v, ".")); l != v && subdomainProblem(l) == "" {
		return "write it in lower case without a trailing dot: " + l + " (DNS is case-insensitive, the installer is not)"
	}
	return "write the name alone in lower case, e.g. " + example
}

// suggestLabel lower-cases a name and replaces what a DNS label cannot hold with '-'.
func suggestLabel(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 63 {
		out = strings.Trim(out[:63], "-")
	}
	if out == "" {
		return "site-1"
	}
	return out
}

// secretRef checks a reference: exactly one of file or env; an env name that is valid and set.
// The file side is checked with the other files.
func (c *checker) secretRef(path string, r SecretRef) {
	switch {
	case r.File != "" && r.Env != "":
		c.err(path, "both file and env are set", "keep exactly one: `{file: PATH}` or `{env: NAME}`")
	case r.Env != "" && !envNameRE.MatchString(r.Env):
		c.err(path+".env", fmt.Sprintf("%q is not an environment variable name", r.Env),
			"name the variable (letters, digits, '_'), not its value")
	case r.Env != "":
		if v, ok := c.o.lookupEnv(r.Env); !ok || v == "" {
			c.warn(path+".env", fmt.Sprintf("environment variable %s is not set in this shell", r.Env),
				fmt.Sprintf("export %s before `bootstrap run` (read -rs %s && export %s)", r.Env, r.Env, r.Env))
		} else {
			c.secretLength(path+".env", "the secret in environment variable "+r.Env, []byte(v))
		}
	}
}
