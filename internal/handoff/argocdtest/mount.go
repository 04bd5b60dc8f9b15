package argocdtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// mounts are the ConfigMaps a kubelet mounts into the repo-server's pod, and where under Dir:
// Argo CD reads TLS certificates, SSH known hosts and GnuPG keys from files, not from the API.
var mounts = map[string]string{
	"argocd-tls-certs-cm":       "tls",
	"argocd-ssh-known-hosts-cm": "ssh",
	"argocd-gpg-keys-cm":        "gpg/source",
}

// mounter keeps the mounted ConfigMaps' files current, as a kubelet does (a kubelet within a
// minute or so; this within a second, so tests need not wait).
type mounter struct {
	d       dynamic.Interface
	ns, dir string
	written map[string]string // file -> content last written
}

func (m *mounter) run(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
		_ = m.once(ctx) // the next pass retries
	}
}

// once writes each ConfigMap's keys as files and removes the files of keys gone.
func (m *mounter) once(ctx context.Context) error {
	for cm, sub := range mounts {
		u, err := m.d.Resource(configMaps).Namespace(m.ns).Get(ctx, cm, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			u, err = &unstructured.Unstructured{Object: map[string]any{}}, nil
		}
		if err != nil {
			return fmt.Errorf("argo cd: mount %s: %w", cm, err)
		}
		data, _, _ := unstructured.NestedStringMap(u.Object, "data")
		if err := m.sync(filepath.Join(m.dir, sub), data); err != nil {
			return fmt.Errorf("argo cd: mount %s: %w", cm, err)
		}
	}
	return nil
}

func (m *mounter) sync(dir string, data map[string]string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if _, ok := data[e.Name()]; !ok && !e.IsDir() {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
			delete(m.written, filepath.Join(dir, e.Name()))
		}
	}
	for k, v := range data {
		if k == "" || k == "." || k == ".." || strings.ContainsAny(k, `/\`) {
			continue // not a ConfigMap key; the API server refuses it anyway
		}
		f := filepath.Join(dir, k)
		if c, ok := m.written[f]; ok && c == v {
			continue
		}
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		tmp := f + ".tmp-" + hex.EncodeToString(b)
		if err := os.WriteFile(tmp, []byte(v), 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, f); err != nil {
			return err
		}
		m.written[f] = v
	}
	return nil
}
