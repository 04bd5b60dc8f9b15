package site

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"regexp"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
)

// maxContentFile bounds the files whose content Validate reads (a public key, a CA bundle): a
// bundle of a few hundred certificates is well under it.
const maxContentFile = 4 << 20

// contents reads the files whose content bootstrap copies into install-config.yaml (and from
// there into the ISO): the SSH public key and the trust bundles. openshift-install refuses a
// malformed one only after it has loaded its whole asset graph, and a private key named as the
// public key would be carried to every node; both are found here instead. A file that does not
// exist or is not a regular file is reported by files(), and skipped here.
func (c *checker) contents() {
	if k := c.s.Cluster.SSHKeyFile; k != "" {
		if data, ok := readContent(k); ok {
			c.sshPublicKey("cluster.sshKeyFile", k, data)
		}
	}
	if f := c.s.Registry.CAFile; f != "" {
		if data, ok := readContent(f); ok {
			c.trustBundle("registry.caFile", f, data)
		}
	}
	for i, f := range c.s.Day1.TrustBundles {
		if data, ok := readContent(f); ok {
			c.trustBundle(fmt.Sprintf("day1.trustBundles[%d]", i), f, data)
		}
	}
}

// readContent reads a regular file of at most maxContentFile bytes.
func readContent(p string) ([]byte, bool) {
	f, err := fsroot.OpenFile(p, fsroot.Stream) // regular only: a FIFO cannot block validate
	if err != nil {
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxContentFile+1))
	return data, err == nil && len(data) <= maxContentFile
}

// privateKeyRE matches the armour of every private key format ssh-keygen, OpenSSL and PuTTY write
// (the installer's own check looks for -BEGIN ... PRIVATE KEY-).
var privateKeyRE = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----|PuTTY-User-Key-File-`)

// sshPublicKey holds the file sshKeyFile names to what install-config's sshKey takes: an OpenSSH
// public key (the installer's validate.SSHPublicKey parses it with ssh.ParseAuthorizedKey).
// Messages never quote the file: it may be a private key.
func (c *checker) sshPublicKey(path, file string, data []byte) {
	switch {
	case privateKeyRE.Match(data):
		// The installer accepts some of these as sshKey or echoes them in its error; either way the
		// key would reach install-config.yaml, the ISO and every node.
		remedy := fmt.Sprintf("write the public key with `ssh-keygen -y -f %s > %s.pub` and set sshKeyFile: %s.pub (the private key stays beside it, mode 0600, for gather)", file, file, file)
		if priv, ok := strings.CutSuffix(file, ".pub"); ok {
			remedy = fmt.Sprintf("this private key is misnamed: move it to %s (mode 0600, gather uses it), then `ssh-keygen -y -f %s > %s` writes the public key", priv, priv, file)
		}
		c.err(path, fmt.Sprintf("%s holds a PRIVATE key: bootstrap copies this file into install-config.yaml and the ISO, so every node and everyone who reads them would have it", file), remedy)
		return
	case len(bytes.TrimSpace(stripComments(data))) == 0:
		c.err(path, fmt.Sprintf("%s holds no SSH public key (the file is empty or only comments): the nodes would accept no key, and gather could not log in", file),
			fmt.Sprintf("write the public key into it (`ssh-keygen -y -f PRIVATE-KEY > %s`), or point sshKeyFile at the .pub file ssh-keygen wrote", file))
		return
	}
	if _, _, _, _, err := ssh.ParseAuthorizedKey(data); err != nil {
		c.err(path, fmt.Sprintf("%s is not an OpenSSH public key: the installer says invalid sshKey: %v", file, err),
			"point it at the one-line .pub file ssh-keygen writes (type, base64 key, comment), e.g. ssh/id_ed25519.pub")
	}
}

// stripComments drops the lines starting with '#', as ssh.ParseAuthorizedKey does.
func stripComments(data []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(data, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			out = append(out, l)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// trustBundle holds a CA file bootstrap puts into install-config's additionalTrustBundle to what
// the installer reads there (validate.CABundle: PEM blocks, each an X.509 certificate). Rendering
// keeps only the "CERTIFICATE" blocks, so any other block would be dropped silently; it is
// refused here with what to do about it.
func (c *checker) trustBundle(path, file string, data []byte) {
	rest, certs := data, 0
	for {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		// the block's own BEGIN line (Decode skips a malformed block before it)
		begin := max(0, bytes.LastIndex(data[:len(data)-len(rest)], []byte("-----BEGIN "+blk.Type)))
		line := 1 + bytes.Count(data[:begin], []byte("\n"))
		at := fmt.Sprintf("%s line %d", file, line)
		switch blk.Type {
		case "CERTIFICATE":
			certs++
			if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
				c.err(path, fmt.Sprintf("%s: the certificate is malformed (%v): the installer rejects additionalTrustBundle with it", at, err),
					"copy the CA certificate again from its source (`openssl x509 -in FILE -noout -subject` must print its subject)")
			}
		case "TRUSTED CERTIFICATE":
			certs++
			c.err(path, fmt.Sprintf("%s: an OpenSSL TRUSTED CERTIFICATE block, which the installer does not read (it takes plain CERTIFICATE blocks)", at),
				fmt.Sprintf("convert it: `openssl x509 -in %s -out CA.pem` writes the plain certificate (its OpenSSL trust settings are not used by the cluster)", file))
		default:
			what := fmt.Sprintf("a %s block, not a certificate", blk.Type)
			remedy := "keep only the CA certificates (BEGIN CERTIFICATE blocks) in this file"
			if strings.Contains(blk.Type, "PRIVATE KEY") {
				what = "a PRIVATE KEY block: the trust bundle is copied to every node"
				remedy = "remove the private key from this file; a trust bundle holds CA certificates only"
			}
			c.err(path, fmt.Sprintf("%s: %s", at, what), remedy)
		}
	}
	if n := bytes.Count(data, []byte("-----BEGIN CERTIFICATE-----")) + bytes.Count(data, []byte("-----BEGIN TRUSTED CERTIFICATE-----")); n > certs {
		// Not "the installer rejects": rendering drops a block without an END line, and the
		// installer sees only one with bad base64.
		c.err(path, fmt.Sprintf("%s: %d of its certificate blocks are not valid PEM (bad base64, or no END line): the nodes would not trust them", file, n-certs),
			"copy the CA certificate again from its source, whole, with its -----END CERTIFICATE----- line")
	} else if n == 0 && certs == 0 && bytes.Count(data, []byte("-----BEGIN")) == 0 {
		c.err(path, fmt.Sprintf("%s holds no PEM certificate", file),
			"point it at the CA certificate in PEM form (a file starting with -----BEGIN CERTIFICATE-----; `openssl x509 -inform der -in CA.der -out CA.pem` converts a DER one)")
	}
}
