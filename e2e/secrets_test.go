//go:build e2e

package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/e2e/lab/harness"
	"github.com/bootstrap-dev/bootstrap/internal/bmc/bmctest"
)

// The planted secrets: each distinctive, each with characters that JSON, URL and base64 encodings
// all change, so every encoded form differs from the plain one.
var planted = map[string]string{
	"registry password (the pull secret's auth)": "cnryREG-7Qx+w/z@k&<p>",
	"BMC password": "cnryBMC-4Lm+v/y@j&<q>",
	"Git password": "cnryGIT-9Rt+u/x@h&<r>",
}

// allowed are the files that carry a secret on purpose, relative to the work dir, each with why.
// Everything else the run writes must hold no form of any planted secret.
var allowed = []struct {
	re  *regexp.Regexp
	why string
}{
	{regexp.MustCompile(`^(installer/)?install-config\.yaml$`), "the installer's input: the pull secret (the mirror registry's auth) reaches the cluster through it; written 0600"},
	{regexp.MustCompile(`^installer/\.openshift_install_state\.json$`), "openshift-install's own state beside its input: it holds the install-config"},
	{regexp.MustCompile(`\.iso$`), "an agent ISO: its ignition carries the pull secret to the nodes"},
	{regexp.MustCompile(`^installer/.*\.ign$`), "ignition openshift-install generates for the nodes: it carries the pull secret"},
}

// TestNoSecretInAnyOutput plants a distinctive registry password (the pull secret's auth), BMC
// password and Git password in the lab, runs the whole pipeline, then report, status -o json and
// gather, and greps every file of the work dir (gzip'd tarballs opened) and every command's
// output for each secret in plain, base64 (standard and URL alphabets, at each of the three
// alignments inside a larger encoded string), JSON-escaped and URL-encoded forms. Only the files
// in allowed may carry one.
func TestNoSecretInAnyOutput(t *testing.T) {
	dir := t.TempDir()
	for file, v := range map[string]string{"secrets/registry.password": planted["registry password (the pull secret's auth)"],
		"secrets/bmc-password": planted["BMC password"], "secrets/git-password": planted["Git password"]} {
		p := filepath.Join(dir, file)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l := startLabIn(t, dir)
	l.until = ""
	outputs := map[string]string{}
	outputs["run"] = l.mustRun(t, 0, "run").out
	outputs["status -o json"] = l.mustRun(t, 0, "status", "-o", "json").out
	outputs["report"] = l.mustRun(t, 0, "report").out
	outputs["report json"] = l.mustRun(t, 0, "report", "--format", "json").out
	outputs["report html"] = l.mustRun(t, 0, "report", "--format", "html", "--out", filepath.Join(l.workDir(), "report.html")).out
	// A hostile BMC: every read answers 500 with a message that echoes the login, the password in
	// plain, JSON-escaped and Basic (base64) forms. gather stores what it gets from BMCs.
	user, pw := l.Site.Nodes[0].BMC.Username, planted["BMC password"]
	for _, sim := range l.bmcs.Sims {
		sim.Inject(bmctest.Fault{Op: "get", Status: 500, MessageID: "Base.1.8.InternalError",
			Message: "login " + user + ":" + pw + " refused; Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw)) +
				"; " + `\u0063` + pw[1:]})
	}
	outputs["gather"] = l.run(t, "gather").out // exit 5 (partial) is fine: what it wrote is checked
	if !strings.Contains(outputs["gather"], "500") {
		t.Errorf("gather did not meet the hostile BMC (no HTTP 500 in its output): the sweep of its bundle proves nothing\n%s", tail(outputs["gather"], 20))
	}
	outputs["validate"] = l.mustRun(t, 0, "validate").out

	n := 0
	for name, out := range outputs {
		n += sweep(t, "output of "+name, []byte(out))
	}
	files := 0
	err := filepath.WalkDir(l.workDir(), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(l.workDir(), p)
		for _, a := range allowed {
			if a.re.MatchString(rel) {
				t.Logf("allowed: %s (%s)", rel, a.why)
				return nil
			}
		}
		files++
		t.Logf("swept: %s", rel)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n += sweepFile(t, rel, b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Fatalf("only %d files in the work dir: the run did not write what it should", files)
	}
	t.Logf("%d files and %d outputs swept, %d leaks", files, len(outputs), n)
}

// sweepFile is sweep, opening gzip'd files and tarballs (the gather bundle) entry by entry.
func sweepFile(t *testing.T, name string, b []byte) int {
	t.Helper()
	if len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return 0
		}
		if ub, err := io.ReadAll(zr); err == nil {
			b = ub
		}
	}
	n := 0
	if len(b) > 262 && string(b[257:262]) == "ustar" {
		tr := tar.NewReader(bytes.NewReader(b))
		for {
			h, err := tr.Next()
			if err != nil {
				break
			}
			eb, _ := io.ReadAll(tr)
			n += sweepFile(t, name+"!"+h.Name, eb)
		}
		return n
	}
	return n + sweep(t, name, b)
}

// sweep reports every planted secret found in b in any form; it returns how many.
func sweep(t *testing.T, name string, b []byte) int {
	t.Helper()
	views := map[string][]byte{"": b, " (JSON-unescaped)": jsonUnescape(b), " (URL-decoded)": urlDecode(b)}
	n := 0
	for what, secret := range planted {
		for vname, v := range views {
			for form, needle := range forms(secret) {
				if i := bytes.Index(v, []byte(needle)); i >= 0 {
					n++
					t.Errorf("%s%s holds the %s as %s at %d: …%s…", name, vname, what, form, i, v[max(0, i-40):min(len(v), i+len(needle)+20)])
				}
			}
		}
	}
	return n
}

// forms are the strings that betray secret: plain, and the characters of its base64 encodings
// that depend on its bytes alone, at each alignment (0, 1 or 2 bytes before it in the encoded
// string: `user:secret` as Basic auth or in a pull secret), in the standard and URL alphabets.
func forms(secret string) map[string]string {
	out := map[string]string{"plain": secret}
	for k := range 3 {
		raw := append(make([]byte, k), secret...)
		from, to := (8*k+5)/6, 8*len(raw)/6
		for name, enc := range map[string]*base64.Encoding{"base64": base64.StdEncoding, "base64url": base64.URLEncoding} {
			out[name+" at alignment "+strconv.Itoa(k)] = enc.EncodeToString(raw)[from:to]
		}
	}
	return out
}

var (
	jsonEscapeRE = regexp.MustCompile(`\\u([0-9a-fA-F]{4})`)
	pctRE        = regexp.MustCompile(`%([0-9a-fA-F]{2})`)
)

// jsonUnescape undoes \uXXXX escapes (any mix of escaped and plain characters, e.g. `\u0063nry`).
func jsonUnescape(b []byte) []byte {
	return jsonEscapeRE.ReplaceAllFunc(b, func(m []byte) []byte {
		r, _ := strconv.ParseUint(string(m[2:]), 16, 32)
		return []byte(string(rune(r)))
	})
}

// urlDecode undoes %XX escapes (any mix) and form encoding's + for a space is left alone.
func urlDecode(b []byte) []byte {
	return pctRE.ReplaceAllFunc(b, func(m []byte) []byte {
		v, _ := strconv.ParseUint(string(m[1:]), 16, 8)
		return []byte{byte(v)}
	})
}

// startLabIn is startLab in a lab dir the test prepared (files already there are kept).
func startLabIn(t *testing.T, dir string) *testLab {
	t.Helper()
	l, err := harness.New(dir, harness.Default(harness.Options{SourceCache: sourceCache})...)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Up(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = l.Down(ctx)
	})
	tl := &testLab{Lab: l, bin: binary(t)}
	for _, c := range l.Components() {
		switch c := c.(type) {
		case *harness.Registry:
			tl.reg = c
		case *harness.BMCs:
			tl.bmcs = c
		case *harness.Cluster:
			tl.cluster = c
		case *harness.Git:
			tl.git = c
		}
	}
	return tl
}
