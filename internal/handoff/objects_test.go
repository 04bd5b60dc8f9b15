package handoff

import (
	"encoding/base64"
	"testing"
)

func TestRepoObjectsForSSHAndHTTPS(t *testing.T) {
	objs, err := repoObjects(Repo{URL: "git@git.site.example:platform/config.git", SSHPrivateKey: []byte("KEY"), KnownHosts: []byte("git.site.example ssh-ed25519 AAAA")})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[1].GetName() != "argocd-ssh-known-hosts-cm" {
		t.Fatalf("ssh objects: %v", objs)
	}
	data := objs[0].Object["data"].(map[string]any)
	if k, _ := base64.StdEncoding.DecodeString(data["sshPrivateKey"].(string)); string(k) != "KEY" || data["password"] != nil {
		t.Fatalf("ssh secret data: %v", data)
	}
	if objs[0].GetLabels()["argocd.argoproj.io/secret-type"] != "repository" || objs[0].GetLabels()["app.kubernetes.io/part-of"] != "argocd" {
		t.Fatalf("labels: %v", objs[0].GetLabels())
	}
	objs, err = repoObjects(Repo{URL: "https://git.site.example:3000/platform/config.git", Username: "u", Password: "p", CA: []byte("PEM")})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[1].GetName() != "argocd-tls-certs-cm" || objs[1].Object["data"].(map[string]any)["git.site.example"] != "PEM\n" {
		t.Fatalf("https objects: %v", objs)
	}
}
