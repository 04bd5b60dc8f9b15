package agentiso

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	mirrorpkg "github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// DefaultBlacklist returns the blacklist used when day1.moduleBlacklist is absent: irdma on the
// worker pool when a GPU node is a worker, and on the master pool when a GPU node is a master
// (compact clusters, where the masters carry the NICs). irdma, the Intel RDMA driver, collides at
// kernel level with NVIDIA ConnectX RDMA and blocks SR-IOV on GPU nodes.
func DefaultBlacklist(s *site.Site) []site.ModuleBlacklist {
	var pools []string
	for _, role := range []string{site.RoleMaster, site.RoleWorker} {
		for _, n := range s.Nodes {
			if n.GPU && n.Role == role {
				pools = append(pools, role)
				break
			}
		}
	}
	if len(pools) == 0 {
		return nil
	}
	return []site.ModuleBlacklist{{
		Modules: []string{"irdma"},
		Pools:   pools,
		Reason:  "irdma (Intel RDMA) collides with NVIDIA ConnectX RDMA and blocks SR-IOV on GPU nodes",
	}}
}

func day1Manifests(s *site.Site, mirror *MirrorOutputs) ([]File, error) {
	var files []File
	add := func(name string, data []byte) error {
		for _, f := range files {
			if f.Path == path.Join(ManifestsDir, name) {
				return fmt.Errorf("day-1 manifests: two manifests named %s; rename one", name)
			}
		}
		files = append(files, File{Path: path.Join(ManifestsDir, name), Data: data})
		return nil
	}

	blacklist := s.Day1.ModuleBlacklist
	if blacklist == nil {
		blacklist = DefaultBlacklist(s)
	}
	for _, mc := range machineConfigs(blacklist) {
		if err := add(mc.Name, mc.Data); err != nil {
			return nil, err
		}
	}
	if s.Day1.DisableDefaultSources == nil || *s.Day1.DisableDefaultSources {
		if err := add("99-operatorhub-disable-default-sources.yaml", []byte(operatorHub)); err != nil {
			return nil, err
		}
	}
	for _, cs := range mirror.CatalogSources {
		hdr := "# CatalogSource written by the mirror stage (" + cs.Name + "), applied at install time so\n" +
			"# operators install from the mirror registry from the first boot.\n"
		if err := add(cs.Name, append([]byte(hdr), cs.Data...)); err != nil {
			return nil, err
		}
	}
	if len(mirror.TagMirrors) > 0 {
		hdr := "# ImageTagMirrorSet written by the mirror stage: install-config has no field for tag\n" +
			"# mirrors, so it is applied as a day-1 manifest.\n"
		if err := add(mirrorpkg.ITMSFile, append([]byte(hdr), mirror.TagMirrors...)); err != nil {
			return nil, err
		}
	}
	extra, err := extraManifests(s)
	if err != nil {
		return nil, err
	}
	for _, f := range extra {
		if err := add(f.Name, f.Data); err != nil {
			return nil, fmt.Errorf("day1.extraManifestsDir: %w", err)
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

const operatorHub = `# OperatorHub with the default sources disabled: on an air-gapped site they can never be
# reached, and their failing pods and alerts hide real problems. The mirror's CatalogSources
# replace them.
apiVersion: config.openshift.io/v1
kind: OperatorHub
metadata:
  name: cluster
spec:
  disableAllDefaultSources: true
`

// machineConfigs renders one MachineConfig per pool with every module blacklisted for that pool,
// through both mechanisms: the module_blacklist= kernel argument (honoured by the kernel and
// udev/modprobe from the initramfs on, before any file on disk is read) and a /etc/modprobe.d
// file (which also stops explicit `modprobe irdma` via an install override). Both are needed: the
// kernel argument alone is lost if someone edits kargs, the file alone is too late for the
// initramfs.
func machineConfigs(list []site.ModuleBlacklist) []NamedFile {
	byPool := map[string][]string{}
	reasons := map[string][]string{}
	for _, b := range list {
		for _, p := range b.Pools {
			for _, m := range b.Modules {
				if !contains(byPool[p], m) {
					byPool[p] = append(byPool[p], m)
				}
			}
			if b.Reason != "" && !contains(reasons[p], b.Reason) {
				reasons[p] = append(reasons[p], b.Reason)
			}
		}
	}
	pools := make([]string, 0, len(byPool))
	for p := range byPool {
		pools = append(pools, p)
	}
	sort.Strings(pools)
	var out []NamedFile
	for _, p := range pools {
		mods := byPool[p]
		sort.Strings(mods)
		name := "99-" + p + "-module-blacklist"
		var conf strings.Builder
		conf.WriteString("# Written by bootstrap (MachineConfig " + name + ").\n")
		for _, m := range mods {
			conf.WriteString("blacklist " + m + "\ninstall " + m + " /bin/false\n")
		}
		var b strings.Builder
		b.WriteString("# Keeps kernel modules " + strings.Join(mods, ", ") + " from loading on the " + p + " pool.\n")
		for _, r := range reasons[p] {
			b.WriteString("# Why: " + r + ".\n")
		}
		b.WriteString("# Both the module_blacklist= kernel argument (effective from the initramfs on) and a\n" +
			"# /etc/modprobe.d file (also blocks explicit modprobe) are set. Applied at install time as an\n" +
			"# extra manifest, so no extra reboot is needed.\n")
		fmt.Fprintf(&b, `apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  name: %s
  labels:
    machineconfiguration.openshift.io/role: %s
spec:
  kernelArguments:
    - module_blacklist=%s
  config:
    ignition:
      version: 3.2.0
    storage:
      files:
        - path: /etc/modprobe.d/bootstrap-blacklist.conf
          mode: 420
          overwrite: true
          contents:
            source: data:,%s
`, name, p, strings.Join(mods, ","), dataURLEscape(conf.String()))
		out = append(out, NamedFile{Name: name + ".yaml", Data: []byte(b.String())})
	}
	return out
}

// dataURLEscape percent-encodes text for an RFC 2397 data URL as Ignition reads it.
func dataURLEscape(s string) string {
	return strings.ReplaceAll(url.PathEscape(s), ":", "%3A")
}

// extraManifests reads the user's manifests folder (top level only, .yaml/.yml/.json), checking
// each is a Kubernetes object so a stray file fails here and not half-way through the install.
func extraManifests(s *site.Site) ([]NamedFile, error) {
	if s.Day1.ExtraManifestsDir == "" {
		return nil, nil
	}
	dir := resolve(s, s.Day1.ExtraManifestsDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("day1.extraManifestsDir: %w", err)
	}
	var out []NamedFile
	for _, e := range entries {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if e.IsDir() || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		data, err := fsroot.ReadFile(p, fsroot.Manifest)
		if err != nil {
			return nil, fmt.Errorf("day1.extraManifestsDir: %w", err)
		}
		if err := checkManifests(data, ""); err != nil {
			return nil, fmt.Errorf("day1.extraManifestsDir: %s: %w", p, err)
		}
		out = append(out, NamedFile{Name: e.Name(), Data: data})
	}
	return out, nil
}
