package site

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"
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

// Limits on secret files: a password or token is a line; an auth JSON or a private key a few
// KiB. Anything larger is not the secret (a disk image named by mistake would exhaust memory).
const (
	MaxSecretSize     = 4 << 10 // a password or token (a {file: ...} reference)
	MaxSecretFileSize = 1 << 20 // a registry auth file, a private key
)

// SecretReadTimeout bounds reading one secret file (a file on a hung network mount).
const SecretReadTimeout = 10 * time.Second

// ReadSecretFile reads a secret file by path (a registry auth file, a private key) under the same
// rules as ReadSecret, without trimming: the content is returned as stored. Only a regular file
// of at most MaxSecretFileSize is read (a named pipe is refused, not waited on).
func ReadSecretFile(path string) ([]byte, error) { return readLimited(path, MaxSecretFileSize) }

func readSecretFile(path string) ([]byte, error) {
	b, err := readLimited(path, MaxSecretSize)
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

// readLimited opens path without blocking (a FIFO would block open until a writer comes),
// checks what was opened (regular, private, at most limit bytes) and reads it within
// SecretReadTimeout.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("read secret file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read secret file: %w", err)
	}
	if err := secretFileOK(path, fi, limit); err != nil {
		return nil, err
	}
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(f, limit+1))
		done <- result{b, err}
	}()
	t := time.NewTimer(SecretReadTimeout)
	defer t.Stop()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("read secret file: %w", r.err)
		}
		if int64(len(r.b)) > limit {
			return nil, fmt.Errorf("secret file %s grew past %d bytes while read", path, limit)
		}
		return r.b, nil
	case <-t.C:
		return nil, fmt.Errorf("secret file %s: not read within %s (a hung mount?)", path, SecretReadTimeout)
	}
}

// secretFileOK refuses what is not a private regular file of at most limit bytes.
func secretFileOK(path string, fi os.FileInfo, limit int64) error {
	switch {
	case fi.IsDir():
		return fmt.Errorf("secret file %s is a directory", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("secret file %s is not a regular file (%s): point it at a file holding the secret", path, fi.Mode().Type())
	case fi.Size() > limit:
		return fmt.Errorf("secret file %s is %d bytes, more than the %d bytes a secret may be: point it at the secret alone", path, fi.Size(), limit)
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
