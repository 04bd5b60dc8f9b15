// Command openshift-install-double is a TEST DOUBLE of openshift-install, never shipped: it
// implements `version` and `agent create image --dir D` closely enough for the iso stage's tests
// and the e2e lab. It checks the asset directory the way the real installer would fail on it
// (missing or malformed install-config.yaml / agent-config.yaml, manifests that are not
// Kubernetes objects, a release override not by digest), consumes the two configs as the real one
// does, and writes D/agent.x86_64.iso laid out like a CoreOS live ISO with xorriso, with an
// ignition config embedded that records what it received.
//
// `agent wait-for bootstrap-complete|install-complete --dir D` waits until the file of that name
// appears in the directory OPENSHIFT_INSTALL_DOUBLE_CLUSTER (where the lab's cluster player
// writes it), then copies that directory's kubeconfig to D/auth/kubeconfig; without the variable
// it fails as the real installer does when no cluster answers.
//
// Like the real installer it carries release placeholders (stamp.go) that extraction from a
// release payload overwrites: the stamped version, release image and architecture are what it
// reports and uses. The lab's release payload carries it as its installer component.
//
// Environment: OPENSHIFT_INSTALL_DOUBLE_VERSION overrides the version it reports (default: the
// stamped one, else 4.16.3); OPENSHIFT_INSTALL_DOUBLE_FAIL makes `agent create image` fail with
// that message; OPENSHIFT_INSTALL_DOUBLE_CLUSTER is the directory `agent wait-for` watches
// (default: the one named by a .openshift-install-double-cluster file in the asset directory or
// above it).
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso/agentisotest"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "level=fatal msg=%q\n", err.Error())
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	version := os.Getenv("OPENSHIFT_INSTALL_DOUBLE_VERSION")
	if version == "" {
		version = stamped(releaseVersionPadded, "RELEASE_VERSION")
	}
	if version == "" {
		version = "4.16.3"
	}
	// as the real one: the override, else the stamped release, else its build-time default (by tag)
	release := os.Getenv("OPENSHIFT_INSTALL_RELEASE_IMAGE_OVERRIDE")
	if release == "" {
		release = stamped(releaseImagePadded, "RELEASE_IMAGE")
	}
	if release == "" {
		release = "registry.ci.openshift.org/origin/release:4.16"
	}
	arch := stamped(releaseArchPadded, "RELEASE_ARCHITECTURE") // "linux/amd64" or "multi (linux/amd64)"
	switch {
	case arch == "":
		arch = "unknown"
	case strings.HasPrefix(arch, "multi"):
		arch = "multi"
	default:
		arch = strings.TrimPrefix(arch, "linux/")
	}
	switch {
	case len(args) == 1 && args[0] == "version":
		fmt.Fprintf(stdout, "openshift-install %s\nbuilt from commit test-double\nrelease image %s\nrelease architecture %s\n", version, release, arch)
		return nil
	case len(args) >= 3 && args[0] == "agent" && args[1] == "create" && args[2] == "image":
		fs := flag.NewFlagSet("agent create image", flag.ContinueOnError)
		dir := fs.String("dir", ".", "asset directory")
		fs.String("log-level", "info", "log level")
		if err := fs.Parse(args[3:]); err != nil {
			return err
		}
		return createImage(*dir, release, stderr)
	case len(args) >= 3 && args[0] == "agent" && args[1] == "wait-for":
		fs := flag.NewFlagSet("agent wait-for", flag.ContinueOnError)
		dir := fs.String("dir", ".", "asset directory")
		fs.String("log-level", "info", "log level")
		if err := fs.Parse(args[3:]); err != nil {
			return err
		}
		return waitFor(args[2], *dir, clusterDir(*dir), stderr)
	}
	return fmt.Errorf("openshift-install-double: unsupported arguments %q", args)
}

type received struct {
	Cluster      string   `json:"cluster"`
	Hosts        []string `json:"hosts"`
	MACs         []string `json:"macs"`
	Manifests    []string `json:"manifests"`
	ReleaseImage string   `json:"releaseImage"`
}

func createImage(dir, release string, log io.Writer) error {
	info := func(msg string) { fmt.Fprintf(log, "level=info msg=%q\n", msg) }
	if msg := os.Getenv("OPENSHIFT_INSTALL_DOUBLE_FAIL"); msg != "" {
		return errors.New(msg)
	}
	if os.Getenv("OPENSHIFT_INSTALL_RELEASE_IMAGE_OVERRIDE") != "" && !strings.Contains(release, "@sha256:") {
		return fmt.Errorf("release image override %q is not by digest", release)
	}
	var ic struct {
		APIVersion string `yaml:"apiVersion"`
		Metadata   struct {
			Name string `yaml:"name"`
		} `yaml:"metadata"`
		BaseDomain string         `yaml:"baseDomain"`
		PullSecret string         `yaml:"pullSecret"`
		Platform   map[string]any `yaml:"platform"`
	}
	if err := readYAML(filepath.Join(dir, "install-config.yaml"), &ic); err != nil {
		return err
	}
	var ps struct {
		Auths map[string]any `json:"auths"`
	}
	if ic.APIVersion != "v1" || ic.Metadata.Name == "" || ic.BaseDomain == "" || len(ic.Platform) != 1 {
		return errors.New("failed to fetch Agent Installer ISO: invalid install-config: apiVersion, metadata.name, baseDomain and one platform are required")
	}
	if err := json.Unmarshal([]byte(ic.PullSecret), &ps); err != nil || ps.Auths == nil {
		return errors.New("failed to fetch Agent Installer ISO: invalid install-config: pullSecret: invalid pull secret")
	}
	var ac struct {
		APIVersion   string `yaml:"apiVersion"`
		Kind         string `yaml:"kind"`
		RendezvousIP string `yaml:"rendezvousIP"`
		Hosts        []struct {
			Hostname   string `yaml:"hostname"`
			Interfaces []struct {
				Name       string `yaml:"name"`
				MACAddress string `yaml:"macAddress"`
			} `yaml:"interfaces"`
			RootDeviceHints struct {
				DeviceName string `yaml:"deviceName"`
			} `yaml:"rootDeviceHints"`
		} `yaml:"hosts"`
	}
	if err := readYAML(filepath.Join(dir, "agent-config.yaml"), &ac); err != nil {
		return err
	}
	if ac.APIVersion != "v1beta1" || ac.Kind != "AgentConfig" || ac.RendezvousIP == "" {
		return errors.New("failed to fetch Agent Config: invalid agent-config: apiVersion v1beta1, kind AgentConfig and rendezvousIP are required")
	}
	got := received{Cluster: ic.Metadata.Name, ReleaseImage: release}
	for _, h := range ac.Hosts {
		if len(h.Interfaces) == 0 {
			return fmt.Errorf("invalid agent-config: hosts[%s].interfaces: at least one interface is required", h.Hostname)
		}
		got.Hosts = append(got.Hosts, h.Hostname)
		for _, i := range h.Interfaces {
			got.MACs = append(got.MACs, i.MACAddress)
		}
	}
	manifests, _ := filepath.Glob(filepath.Join(dir, "openshift", "*"))
	sort.Strings(manifests)
	for _, m := range manifests {
		data, err := os.ReadFile(m)
		if err != nil {
			return err
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var obj struct {
				APIVersion string `yaml:"apiVersion"`
				Kind       string `yaml:"kind"`
			}
			if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
				break
			} else if err != nil || obj.APIVersion == "" || obj.Kind == "" {
				return fmt.Errorf("failed to fetch Extra Manifests: %s: not a Kubernetes object (%v)", m, err)
			}
		}
		got.Manifests = append(got.Manifests, filepath.Base(m))
	}
	info(fmt.Sprintf("Configuration has %d master replicas and workers for %d hosts", len(ac.Hosts), len(ac.Hosts)))
	info("The rendezvous host IP (node0 IP) is " + ac.RendezvousIP)
	info("Extracting base ISO from release payload (test double: writing a CoreOS-shaped ISO with xorriso)")
	recv, _ := json.Marshal(got)
	ign, _ := json.Marshal(map[string]any{
		"ignition": map[string]any{"version": "3.2.0"},
		"storage": map[string]any{"files": []any{map[string]any{
			"path": "/etc/assisted/received.json", "contents": map[string]any{"source": "data:;base64," + b64(recv)},
		}}},
	})
	if err := (agentisotest.LiveISO{Ignition: ign}).Build(filepath.Join(dir, "agent.x86_64.iso")); err != nil {
		return err
	}
	// The real installer consumes the configs and keeps its state and credentials beside the ISO.
	for _, f := range []string{"install-config.yaml", "agent-config.yaml"} {
		os.Remove(filepath.Join(dir, f))
	}
	os.RemoveAll(filepath.Join(dir, "openshift"))
	os.MkdirAll(filepath.Join(dir, "auth"), 0o755)
	os.WriteFile(filepath.Join(dir, "auth", "kubeconfig"), []byte("# test double kubeconfig\n"), 0o600)
	os.WriteFile(filepath.Join(dir, ".openshift_install_state.json"), recv, 0o600)
	info("Generated ISO at " + filepath.Join(dir, "agent.x86_64.iso"))
	return nil
}

func readYAML(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("failed to fetch %s: %w", filepath.Base(path), err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		return fmt.Errorf("failed to fetch %s: %w", filepath.Base(path), err)
	}
	return nil
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
