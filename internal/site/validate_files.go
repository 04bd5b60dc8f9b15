package site

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/redact"
)

// files checks every referenced local path: it exists, is of the right kind, and a secret file
// is private. Nothing is read.
func (c *checker) files() {
	dir := filepath.Dir(c.s.File)
	for _, f := range c.s.pathFields() {
		c.file(f.path, f.v.String(), f.kind, dir)
	}
	if key := c.s.SSHPrivateKeyFile(); key != "" {
		fi, err := os.Stat(key)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			c.warn("cluster.sshKeyFile", fmt.Sprintf("the private key %s beside the public key does not exist: gather cannot log in to the nodes", key),
				"keep the private key next to the .pub file (mode 0600)")
		case err == nil && fi.Mode().Perm()&0o077 != 0:
			c.err("cluster.sshKeyFile", fmt.Sprintf("the private key %s has mode %04o: group or others can read it", key, fi.Mode().Perm()),
				"chmod 600 "+key)
		}
	}
}

func (c *checker) file(path, p, kind, dir string) {
	if kind == "exec" && !filepath.IsAbs(p) {
		return // a program name looked up on PATH when it runs
	}
	fi, err := os.Stat(p)
	if err != nil {
		what := "file"
		if kind == "dir" {
			what = "directory"
		}
		msg := fmt.Sprintf("%s %s does not exist", what, p)
		if !errors.Is(err, fs.ErrNotExist) {
			msg = fmt.Sprintf("%s %s cannot be read: %v", what, p, errors.Unwrap(err))
		}
		remedy := fmt.Sprintf("create it, or correct the path (relative paths are resolved against %s)", dir)
		if c.o.missingFilesAsWarnings {
			c.warn(path, msg, remedy)
		} else {
			c.err(path, msg, remedy)
		}
		return
	}
	switch kind {
	case "dir":
		if !fi.IsDir() {
			c.err(path, fmt.Sprintf("%s is not a directory", p), "point it at a directory")
		}
		return
	case "exec":
		if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			c.err(path, fmt.Sprintf("%s is not an executable file", p), "chmod +x "+p+", or point it at the openshift-install binary")
		}
		return
	}
	if fi.IsDir() {
		c.err(path, fmt.Sprintf("%s is a directory, not a file", p), "point it at a file")
		return
	}
	if !fi.Mode().IsRegular() {
		c.err(path, fmt.Sprintf("%s is not a regular file (%s): reading it could wait forever", p, fi.Mode().Type()),
			"point it at a regular file")
		return
	}
	if kind != "secret" {
		return
	}
	if fi.Mode().Perm()&0o077 != 0 {
		c.err(path, fmt.Sprintf("secret file %s has mode %04o: group or others can read it", p, fi.Mode().Perm()),
			"chmod 600 "+p)
	}
	// a {file: ...} reference holds a password or token; other secret files hold an auth JSON or a key
	limit, ref := int64(MaxSecretFileSize), strings.HasSuffix(path, ".file")
	if ref {
		limit = MaxSecretSize
	}
	if fi.Size() > limit {
		c.err(path, fmt.Sprintf("secret file %s is %d bytes, more than the %d bytes a secret may be", p, fi.Size(), limit),
			"point it at the file holding the secret alone")
		return
	}
	if ref && fi.Mode().Perm()&0o077 == 0 {
		if b, err := readSecretFile(p); err == nil {
			c.secretLength(strings.TrimSuffix(path, ".file"), "the secret in "+p, b)
		}
	}
}

// secretLength refuses a password or token shorter than redact.MinLen: output redaction matches
// whole values of at least that length, so a shorter secret could leave the process unredacted.
//
// A BMC password is the exception: many BMCs ship with a short factory default ("calvin") that a
// field engineer often may not change, so it is a warning naming the risk, and preflight repeats
// it (bmc-credentials).
func (c *checker) secretLength(path, what string, v []byte) {
	n := len(bytes.TrimSpace(v))
	if n < redact.MinLen && strings.Contains(path, ".bmc.password") {
		c.warn(path, fmt.Sprintf("%s is %d characters: values shorter than %d are not scrubbed from output, so a BMC error that echoes it would show it in the journal, logs and report", what, n, redact.MinLen),
			fmt.Sprintf("use a BMC password of at least %d characters where you may change it; otherwise share the work dir's logs with care", redact.MinLen))
		return
	}
	if n < redact.MinLen {
		c.err(path, fmt.Sprintf("%s is %d characters; secrets must have at least %d", what, n, redact.MinLen),
			fmt.Sprintf("use a password or token of at least %d characters (set it on the BMC or Git server first)", redact.MinLen))
	}
}
