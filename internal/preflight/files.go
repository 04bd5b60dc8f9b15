package preflight

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// fileKind says how a referenced file is checked.
type fileKind int

const (
	kindExists fileKind = iota // a regular, non-empty file
	kindDir                    // a directory
	kindSecret                 // a non-empty file whose content is never read into a message
	kindSSHPub                 // an OpenSSH public key
	kindAuth                   // a container auth file (auths JSON)
	kindCA                     // PEM certificates
)

// fileRef is one file the profile names.
type fileRef struct {
	field string // the profile field path ("registry.authFile")
	path  string
	kind  fileKind
	host  string // for kindAuth: the registry the file must hold credentials for
}

// referencedFiles lists the files the profile names, in profile order.
func referencedFiles(s *site.Site) []fileRef {
	var refs []fileRef
	add := func(field, path string, kind fileKind, host string) {
		if path != "" {
			refs = append(refs, fileRef{field: field, path: resolvePath(s, path), kind: kind, host: host})
		}
	}
	add("cluster.sshKeyFile", s.Cluster.SSHKeyFile, kindSSHPub, "")
	add("registry.authFile", s.Registry.AuthFile, kindAuth, s.Registry.Host)
	add("registry.caFile", s.Registry.CAFile, kindCA, "")
	add("mirror.imageSetConfig", s.Mirror.ImageSetConfig, kindExists, "")
	add("mirror.source.authFile", s.Mirror.Source.AuthFile, kindAuth, s.Mirror.Source.Registry)
	add("mirror.source.caFile", s.Mirror.Source.CAFile, kindCA, "")
	add("mirror.source.archiveDir", s.Mirror.Source.ArchiveDir, kindDir, "")
	add("iso.tlsCert", s.ISO.TLSCert, kindCA, "")
	add("iso.tlsKey", s.ISO.TLSKey, kindSecret, "")
	for i, n := range s.Nodes {
		p := "nodes[" + strconv.Itoa(i) + "].bmc."
		add(p+"password.file", n.BMC.Password.File, kindSecret, "")
		add(p+"caFile", n.BMC.CAFile, kindCA, "")
		add("nodes["+strconv.Itoa(i)+"].iso.ignitionFile", n.ISO.IgnitionFile, kindExists, "")
	}
	for i, b := range s.Day1.TrustBundles {
		add("day1.trustBundles["+strconv.Itoa(i)+"]", b, kindCA, "")
	}
	add("day1.extraManifestsDir", s.Day1.ExtraManifestsDir, kindDir, "")
	add("gitops.caFile", s.GitOps.CAFile, kindCA, "")
	add("gitops.credentials.password.file", s.GitOps.Credentials.Password.File, kindSecret, "")
	add("gitops.credentials.sshKeyFile", s.GitOps.Credentials.SSHKeyFile, kindSecret, "")
	add("gitops.credentials.knownHostsFile", s.GitOps.Credentials.KnownHostsFile, kindExists, "")
	for i, a := range s.GitOps.ApplicationSets {
		add("gitops.applicationSets["+strconv.Itoa(i)+"]", a, kindExists, "")
	}
	return refs
}

// secretEnvs lists the environment variables the profile names for secrets.
func secretEnvs(s *site.Site) [][2]string {
	var out [][2]string
	for i, n := range s.Nodes {
		if n.BMC.Password.Env != "" {
			out = append(out, [2]string{"nodes[" + strconv.Itoa(i) + "].bmc.password.env", n.BMC.Password.Env})
		}
	}
	if e := s.GitOps.Credentials.Password.Env; e != "" {
		out = append(out, [2]string{"gitops.credentials.password.env", e})
	}
	return out
}

func fileChecks(s *site.Site, o Options) []Check {
	var out []Check
	for _, r := range dedupe(referencedFiles(s)) {
		name := "file " + r.field
		if r.more > 0 {
			name += fmt.Sprintf(" (+%d more)", r.more)
		}
		out = append(out, Func(name, CategoryFiles, func(context.Context) finding.Finding {
			return checkFile(r.fileRef, o)
		}))
	}
	for _, e := range secretEnvs(s) {
		field, name := e[0], e[1]
		out = append(out, Func("env "+field, CategoryFiles, func(context.Context) finding.Finding {
			if v, ok := os.LookupEnv(name); !ok || v == "" {
				return finding.Failf(fmt.Sprintf("Export %s in the shell that runs bootstrap.", name),
					"%s names $%s, which is not set or empty", field, name)
			}
			return finding.Passf("$%s is set (value not shown)", name)
		}))
	}
	return out
}

// sharedRef is a file checked once for every field that names it the same way (five nodes
// sharing one BMC password file).
type sharedRef struct {
	fileRef
	more int // other fields naming the same file
}

func dedupe(refs []fileRef) []sharedRef {
	var out []sharedRef
	index := map[fileRef]int{}
	for _, r := range refs {
		key := r
		key.field = ""
		if i, ok := index[key]; ok {
			out[i].more++
			continue
		}
		index[key] = len(out)
		out = append(out, sharedRef{fileRef: r})
	}
	return out
}

func checkFile(r fileRef, o Options) finding.Finding {
	fi, err := os.Stat(r.path)
	if err != nil {
		return finding.Failf(fmt.Sprintf("Create %s or fix %s in the site profile.", r.path, r.field), "%s: %v", r.field, err)
	}
	if r.kind == kindDir {
		if !fi.IsDir() {
			return finding.Failf(fmt.Sprintf("Point %s at a directory.", r.field), "%s: %s is not a directory", r.field, r.path)
		}
		return finding.Passf("%s is a directory", r.path)
	}
	if !fi.Mode().IsRegular() {
		return finding.Failf(fmt.Sprintf("Point %s at a regular file.", r.field), "%s: %s is not a regular file", r.field, r.path)
	}
	if fi.Size() == 0 {
		return finding.Failf(fmt.Sprintf("Write the content %s needs into %s.", r.field, r.path), "%s: %s is empty", r.field, r.path)
	}
	switch r.kind {
	case kindSSHPub:
		return checkSSHPub(r)
	case kindAuth:
		return checkAuth(r)
	case kindCA:
		return checkCA(r, o.Now())
	case kindSecret:
		return finding.Passf("%s exists, %d bytes (content not shown)", r.path, fi.Size())
	}
	return finding.Passf("%s exists, %d bytes", r.path, fi.Size())
}
