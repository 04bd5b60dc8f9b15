package preflight

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
)

// sshKeyTypes are the OpenSSH public key algorithms the installer accepts.
var sshKeyTypes = map[string]bool{
	"ssh-rsa": true, "ssh-ed25519": true, "ecdsa-sha2-nistp256": true, "ecdsa-sha2-nistp384": true,
	"ecdsa-sha2-nistp521": true, "sk-ssh-ed25519@openssh.com": true, "sk-ecdsa-sha2-nistp256@openssh.com": true,
}

// checkSSHPub parses an OpenSSH public key line ("type base64 [comment]"): the base64 blob must
// decode and name the same key type.
func checkSSHPub(r fileRef) finding.Finding {
	b, err := fsroot.ReadFile(r.path, fsroot.PEM)
	if err != nil {
		return finding.Failf("Make the file readable by the user running bootstrap.", "%s: %v", r.field, err)
	}
	fix := fmt.Sprintf("Point %s at an OpenSSH public key (the .pub file from ssh-keygen).", r.field)
	if bytes.Contains(b, []byte("PRIVATE KEY")) {
		// Never echo the content: this is a private key.
		return finding.Failf(fix+" Never put a private key in the profile's public key field.", "%s: %s holds a private key, not a public key", r.field, r.path)
	}
	line := strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
	f := strings.Fields(line)
	if len(f) < 2 || !sshKeyTypes[f[0]] {
		return finding.Failf(fix, "%s: %s line 1 does not start with a known key type (ssh-ed25519, ssh-rsa, ecdsa-sha2-*)", r.field, r.path)
	}
	blob, err := base64.StdEncoding.DecodeString(f[1])
	if err != nil || len(blob) < 4 {
		return finding.Failf(fix, "%s: %s line 1: the key is not valid base64", r.field, r.path)
	}
	n := binary.BigEndian.Uint32(blob)
	if uint64(len(blob)) < 4+uint64(n) || string(blob[4:4+n]) != f[0] {
		return finding.Failf(fix, "%s: %s line 1: the key data does not match its type %s", r.field, r.path, f[0])
	}
	comment := ""
	if len(f) > 2 {
		comment = " " + strings.Join(f[2:], " ")
	}
	return finding.Passf("%s: %s key%s", r.path, f[0], comment)
}

// authFile is the container auth file format (podman, docker, oc-mirror).
type authFile struct {
	Auths map[string]struct {
		Auth     string `json:"auth"`
		Username string `json:"username"`
		Password string `json:"password"`
	} `json:"auths"`
}

// checkAuth parses a container auth file and looks for an entry for the registry host. It never
// reports credential values.
func checkAuth(r fileRef) finding.Finding {
	b, err := fsroot.ReadFile(r.path, fsroot.Secret)
	if err != nil {
		return finding.Failf("Make the file readable by the user running bootstrap.", "%s: %v", r.field, err)
	}
	var af authFile
	if err := json.Unmarshal(b, &af); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			// The syntax error's own text quotes a character of the file: it could be part of a
			// secret, so only the position is reported.
			err = fmt.Errorf("syntax error at %s", position(b, se.Offset))
		case errors.As(err, &te):
			err = fmt.Errorf("%s at %s should be %s", te.Field, position(b, te.Offset), te.Type)
		default:
			err = errors.New("unreadable")
		}
		return finding.Failf(fmt.Sprintf("Fix the JSON in %s (podman login --authfile %s HOST writes a valid one).", r.path, r.path),
			"%s: %s is not valid JSON: %v", r.field, r.path, err)
	}
	if len(af.Auths) == 0 {
		return finding.Failf(fmt.Sprintf("Write credentials with podman login --authfile %s HOST.", r.path), "%s: %s has no \"auths\" entries", r.field, r.path)
	}
	hosts := make([]string, 0, len(af.Auths))
	for h, e := range af.Auths {
		hosts = append(hosts, h)
		if e.Auth != "" {
			dec, err := base64.StdEncoding.DecodeString(e.Auth)
			if err != nil || !bytes.Contains(dec, []byte(":")) {
				return finding.Failf(fmt.Sprintf("Re-create the entry for %s with podman login --authfile %s %s.", h, r.path, h),
					"%s: the entry for %s is malformed (auth is not base64 of user:password)", r.field, h)
			}
		} else if e.Username == "" || e.Password == "" {
			return finding.Failf(fmt.Sprintf("Re-create the entry for %s with podman login --authfile %s %s.", h, r.path, h),
				"%s: the entry for %s has no credentials", r.field, h)
		}
	}
	sort.Strings(hosts)
	if r.host != "" && !authHas(af, r.host) {
		return finding.Warnf(fmt.Sprintf("Add credentials for %s: podman login --authfile %s %s.", r.host, r.path, r.host),
			"%s: no entry for %s (entries: %s); access will be anonymous", r.field, r.host, strings.Join(hosts, ", "))
	}
	return finding.Passf("%s: credentials for %s (values not shown)", r.path, strings.Join(hosts, ", "))
}

// position turns a byte offset into "line L, column C".
func position(b []byte, off int64) string {
	off = min(max(off, 0), int64(len(b)))
	before := b[:off]
	line := 1 + bytes.Count(before, []byte("\n"))
	col := int64(len(before)) - int64(bytes.LastIndexByte(before, '\n'))
	return fmt.Sprintf("line %d, column %d", line, col)
}

func authHas(af authFile, host string) bool {
	for h := range af.Auths {
		h = strings.TrimPrefix(strings.TrimPrefix(h, "https://"), "http://")
		if h == host || strings.HasPrefix(h, host+"/") || strings.SplitN(host, ":", 2)[0] == h {
			return true
		}
	}
	return false
}

// expirySoon is how close to NotAfter a certificate draws a warning.
const expirySoon = 30 * 24 * time.Hour

// certName is how a certificate is named in messages: its CN, else its subject, else its SANs.
func certName(c *x509.Certificate) string {
	switch {
	case c.Subject.CommonName != "":
		return c.Subject.CommonName
	case c.Subject.String() != "":
		return c.Subject.String()
	case len(c.DNSNames) > 0:
		return c.DNSNames[0]
	case len(c.IPAddresses) > 0:
		return c.IPAddresses[0].String()
	}
	return "(no subject)"
}

// checkCA parses every certificate in a PEM file and checks that each is valid now.
func checkCA(r fileRef, now time.Time) finding.Finding {
	b, err := fsroot.ReadFile(r.path, fsroot.PEM)
	if err != nil {
		return finding.Failf("Make the file readable by the user running bootstrap.", "%s: %v", r.field, err)
	}
	fix := fmt.Sprintf("Point %s at a PEM file of CERTIFICATE blocks.", r.field)
	var certs []*x509.Certificate
	rest := b
	for {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return finding.Failf(fix, "%s: %s: certificate %d does not parse: %v", r.field, r.path, len(certs)+1, err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return finding.Failf(fix, "%s: %s holds no PEM certificate", r.field, r.path)
	}
	var warn []string
	for _, c := range certs {
		name := certName(c)
		switch {
		case now.After(c.NotAfter):
			return finding.Failf("Renew the certificate and replace "+r.path+".", "%s: %s: %q expired on %s", r.field, r.path, name, c.NotAfter.UTC().Format(time.DateOnly))
		case now.Before(c.NotBefore):
			return finding.Failf("Check the jump host clock (see the ntp checks), or wait until the certificate is valid.",
				"%s: %s: %q is not valid before %s", r.field, r.path, name, c.NotBefore.UTC().Format(time.RFC3339))
		case c.NotAfter.Sub(now) < expirySoon:
			warn = append(warn, fmt.Sprintf("%q expires on %s", name, c.NotAfter.UTC().Format(time.DateOnly)))
		}
	}
	if len(warn) > 0 {
		return finding.Warnf("Renew the certificate before the install; the cluster keeps trusting this bundle.",
			"%s: %s: %s", r.field, r.path, strings.Join(warn, "; "))
	}
	return finding.Passf("%s: %d certificate(s), first %q valid until %s", r.path, len(certs), certName(certs[0]),
		certs[0].NotAfter.UTC().Format(time.DateOnly))
}
