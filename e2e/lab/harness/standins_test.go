package harness

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// The stand-ins behave like the peers they replace: the registry wants TLS with the lab CA and
// the robot's password, the source holds the seeded content, sshd takes the cluster key and its
// host key is the published one, each BMC serves Redfish with the node's MACs.
func TestStandIns(t *testing.T) {
	l := upLab(t, t.TempDir(), Options{})
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(l.CA.PEM())
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, TLSClientConfig: &tls.Config{RootCAs: pool}}}
	get := func(url, user, pass string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}

	reg := "https://" + l.Site.Registry.Host + "/v2/"
	if code, _ := get(reg, "", ""); code != http.StatusUnauthorized {
		t.Errorf("registry without credentials: %d, want 401", code)
	}
	pass, err := os.ReadFile(filepath.Join(l.Dir, "secrets", "registry.password"))
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := get(reg, RegistryUser, string(pass)); code != http.StatusOK {
		t.Errorf("registry with the robot's credentials: %d, want 200", code)
	}
	if code, _ := get(reg, RegistryUser, "wrong"); code != http.StatusUnauthorized {
		t.Errorf("registry with a wrong password: %d, want 401", code)
	}

	code, body := get("https://"+l.Site.Mirror.Source.Registry+"/v2/_catalog?n=1000", "", "")
	var cat struct{ Repositories []string }
	if err := json.Unmarshal(body, &cat); code != http.StatusOK || err != nil {
		t.Fatalf("source catalog: %d %v %s", code, err, body)
	}
	sort.Strings(cat.Repositories)
	for _, want := range []string{"openshift-release-dev/ocp-release", "openshift-release-dev/ocp-v4.0-art-dev",
		"redhat/redhat-operator-index", "redhat/certified-operator-index", "operators/gpu-operator-certified-bundle",
		"operators/openshift-gitops-operator", "ubi9/ubi"} {
		if i := sort.SearchStrings(cat.Repositories, want); i == len(cat.Repositories) || cat.Repositories[i] != want {
			t.Errorf("source has no %s: %v", want, cat.Repositories)
		}
	}

	var pass2 []byte
	if pass2, err = os.ReadFile(filepath.Join(l.Dir, l.Site.Nodes[3].BMC.Password.File)); err != nil {
		t.Fatal(err)
	}
	n := l.Site.Nodes[3]
	code, body = get(n.BMC.Address+"/redfish/v1/Systems/System.Embedded.1/EthernetInterfaces", n.BMC.Username, string(pass2))
	var coll struct {
		Members []struct {
			ID string `json:"@odata.id"`
		}
	}
	if err := json.Unmarshal(body, &coll); code != http.StatusOK || err != nil || len(coll.Members) == 0 {
		t.Fatalf("%s BMC: EthernetInterfaces %d %v %s", n.Name, code, err, body)
	}
	u, _ := url.Parse(n.BMC.Address)
	_, nic := get("https://"+u.Host+coll.Members[0].ID, n.BMC.Username, string(pass2))
	if !strings.Contains(strings.ToUpper(string(nic)), strings.ToUpper(n.BootMAC)) {
		t.Errorf("%s BMC does not report the boot MAC %s: %s", n.Name, n.BootMAC, nic)
	}
	if code, _ := get(n.BMC.Address+"/redfish/v1/Systems/System.Embedded.1", n.BMC.Username, "wrong"); code != http.StatusUnauthorized {
		t.Errorf("%s BMC with a wrong password: %d, want 401", n.Name, code)
	}

	var sshd *SSHD
	for _, c := range l.Components() {
		if s, ok := c.(*SSHD); ok {
			sshd = s
		}
	}
	key, err := os.ReadFile(filepath.Join(l.Dir, "ssh", "id_ed25519"))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	hk, err := knownhosts.New(sshd.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ClientConfig{User: currentUser(), Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)}, HostKeyCallback: hk, Timeout: 10 * time.Second}
	c, err := ssh.Dial("tcp", sshd.Addr(), cfg)
	if err != nil {
		t.Fatalf("ssh %s with the cluster key and the published host key: %v", sshd.Addr(), err)
	}
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out, err := sess.Output("echo lab-node")
	c.Close()
	if err != nil || strings.TrimSpace(string(out)) != "lab-node" {
		t.Errorf("ssh command: %q %v", out, err)
	}
	// A different host key for the same address is refused by a verifying client.
	wrong := filepath.Join(t.TempDir(), "known_hosts")
	other := strings.Replace(mustRead(t, sshd.KnownHosts), "AAAA", "AAAB", 1)
	if err := os.WriteFile(wrong, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	if hk2, err := knownhosts.New(wrong); err == nil {
		cfg.HostKeyCallback = hk2
		if c, err := ssh.Dial("tcp", sshd.Addr(), cfg); err == nil {
			c.Close()
			t.Error("ssh accepted a host key that is not the published one")
		}
	}
	if _, err := net.DialTimeout("tcp", sshd.Addr(), time.Second); err != nil {
		t.Error(err)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "root"
}
