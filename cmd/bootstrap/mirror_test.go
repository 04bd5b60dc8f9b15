package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/config"
	"github.com/sirupsen/logrus"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

func runMirrorCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newMirrorCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	cmd.SetContext(t.Context())
	err := cmd.Execute()
	return out.String() + errOut.String(), err
}

func TestMirrorCommand(t *testing.T) {
	logrus.SetOutput(io.Discard)
	src, err := mirrortest.StartRegistry(mirrortest.RegistryOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := mirrortest.StartRegistry(mirrortest.RegistryOptions{Dir: t.TempDir(), TLS: true, User: "robot", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	b := mirrortest.NewBuilder(regclient.New(regclient.WithConfigHost(config.Host{Name: src.Host, TLS: config.TLSDisabled})), 3)
	refs, err := b.Sample(t.Context(), src.Host, 8)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	isc := filepath.Join(dir, "isc.yaml")
	doc := "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  additionalImages:\n"
	for _, r := range refs {
		doc += "  - name: " + r + "\n"
	}
	if err := os.WriteFile(isc, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"-c", isc, "--src-tls-verify=false", "--ca-file", dst.CAFile, "--authfile", dst.AuthFile,
		"--workspace", "file://" + dir, "docker://" + dst.Host + "/mirror"}

	out, err := runMirrorCmd(t, append([]string{"--dry-run"}, common...)...)
	if err != nil || !strings.Contains(out, "5 images") || !strings.Contains(out, "saved by dedup") {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	out, err = runMirrorCmd(t, common...)
	if err != nil || !strings.Contains(out, "mirrored 5 images (0 already present, 0 failed)") {
		t.Fatalf("mirror: %v\n%s", err, out)
	}
	if strings.Contains(out, "pw") {
		t.Fatalf("output shows the password:\n%s", out)
	}
	res := filepath.Join(dir, "working-dir", "cluster-resources")
	for _, f := range []string{"idms.yaml", "itms.yaml", "content.json", "mapping.txt"} {
		if _, err := os.Stat(filepath.Join(res, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	out, err = runMirrorCmd(t, common...)
	if err != nil || !strings.Contains(out, "5 already present") || !strings.Contains(out, "0 B pulled") {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	out, err = runMirrorCmd(t, append([]string{"--verify", "-o", "json"}, common...)...)
	if err != nil || !strings.Contains(out, `"images":5`) {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	// without the CA the destination is not trusted: a clear error, nothing copied
	noCA := []string{"-c", isc, "--src-tls-verify=false", "--authfile", dst.AuthFile, "--retries", "0",
		"--workspace", "file://" + t.TempDir(), "docker://" + dst.Host + "/other"}
	out, err = runMirrorCmd(t, noCA...)
	if err == nil || !strings.Contains(err.Error(), "presented chain") || !strings.Contains(err.Error(), "--ca-file") {
		t.Fatalf("untrusted destination: want a certificate error, got %v\n%s", err, out)
	}
}

func TestMirrorCommandRejectsUnknownISCField(t *testing.T) {
	isc := filepath.Join(t.TempDir(), "isc.yaml")
	doc := "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  helm:\n    repositories: []\n"
	if err := os.WriteFile(isc, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := runMirrorCmd(t, "-c", isc, "docker://127.0.0.1:1/x")
	if err == nil || !strings.Contains(err.Error(), isc+":4: field \"helm\"") {
		t.Fatalf("want an error naming file, line 4 and field helm, got %v", err)
	}
}
