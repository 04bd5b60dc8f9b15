package site

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
)

// String names the reference without its value: "file:/abs/path" or "env:NAME". This is what
// the journal and logs may hold.
func (r SecretRef) String() string {
	switch {
	case r.File != "" && r.Env == "":
		return "file:" + r.File
	case r.Env != "" && r.File == "":
		return "env:" + r.Env
	case r.File == "" && r.Env == "":
		return "unset"
	}
	return "invalid (both file and env set)"
}

// IsZero reports whether neither file nor env is set.
func (r SecretRef) IsZero() bool { return r.File == "" && r.Env == "" }

// ErrSecretUnset is wrapped by ReadSecret when the reference names nothing usable.
var ErrSecretUnset = errors.New("secret not available")

// ReadSecret reads a secret at the moment of use. A file must not be readable by group or
// others; one trailing newline is dropped (files written with echo). Errors name the reference,
// never the value.
func ReadSecret(ref SecretRef) ([]byte, error) {
	switch {
	case ref.File != "" && ref.Env != "":
		return nil, fmt.Errorf("secret %s: set exactly one of file or env", ref)
	case ref.File != "":
		return readSecretFile(ref.File)
	case ref.Env != "":
		v, ok := os.LookupEnv(ref.Env)
		if !ok || v == "" {
			return nil, fmt.Errorf("secret %s: environment variable %s is not set or empty: %w", ref, ref.Env, ErrSecretUnset)
		}
		return []byte(strings.TrimRight(v, "\r\n")), nil
	}
	return nil, fmt.Errorf("secret: no file or env given: %w", ErrSecretUnset)
}

// ReadSecretFile reads a secret file by path (a registry auth file, a private key) under the same
// rules as ReadSecret, without trimming: the content is returned as stored.
func ReadSecretFile(path string) ([]byte, error) {
	if err := checkPrivate(path); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read secret file: %w", err)
	}
	return b, nil
}

func readSecretFile(path string) ([]byte, error) {
	b, err := ReadSecretFile(path)
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	if len(b) == 0 {
		return nil, fmt.Errorf("secret file %s is empty: %w", path, ErrSecretUnset)
	}
	return b, nil
}

// checkPrivate refuses a secret file that group or others can read or write.
func checkPrivate(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("secret file: %w", err)
	}
	if fi.IsDir() {
		return fmt.Errorf("secret file %s is a directory", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("secret file %s has mode %04o, readable by group or others: run chmod 600 %s", path, perm, path)
	}
	return nil
}

// SSHPrivateKeyFile is the private key beside cluster.sshKeyFile (the same path without .pub),
// used by gather; empty when the public key's name does not end in .pub.
func (s *Site) SSHPrivateKeyFile() string {
	if p, ok := strings.CutSuffix(s.Cluster.SSHKeyFile, ".pub"); ok {
		return p
	}
	return ""
}
