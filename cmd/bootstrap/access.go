package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso"
	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/handoff"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/progress"
	"github.com/bootstrap-dev/bootstrap/internal/site"
	"github.com/bootstrap-dev/bootstrap/internal/stages"
)

// Access is what an engineer needs next once the cluster is up, as openshift-install prints it at
// the end of an install: the kubeconfig, the console and where the kubeadmin password is (never
// the password itself), and, after handoff, the Argo CD console and how to log in to it.
type Access struct {
	Kubeconfig            string `json:"kubeconfig,omitempty"`
	Console               string `json:"console,omitempty"`
	KubeadminPasswordFile string `json:"kubeadminPasswordFile,omitempty"`
	ArgoCD                string `json:"argocd,omitempty"`
	ArgoCDLogin           string `json:"argocdLogin,omitempty"`
	// CheckedNow: install ran, or its Verify held, in this command; false: only the journal says
	// the cluster was installed (status, a run outside install).
	CheckedNow bool `json:"checkedNow"`
	// Installed is when install's last attempt succeeded, as journaled.
	Installed time.Time `json:"installed,omitzero"`
}

// argoAdminSecret is the secret the OpenShift GitOps operator keeps the default instance's admin
// password in (<instance>-cluster, key admin.password).
const argoAdminSecret = "openshift-gitops-cluster"

var serverLine = regexp.MustCompile(`(?m)^\s*server:\s*"?(https://[^\s"]+)`)

// accessOf reads what the journal and the work dir say about access; nil before install succeeded.
// s may be nil (status --dir): the console's domain then comes from the kubeconfig's API server.
func accessOf(dir string, s *site.Site, st pipeline.Status) *Access {
	in := st.Stage(stages.NameInstall)
	if in.Succeeded.IsZero() || len(in.Output) == 0 {
		return nil
	}
	a := &Access{Installed: in.Succeeded}
	if res, err := stages.InstallOutputKey.Decode(in.Output); err == nil && res.Kubeconfig != "" {
		a.Kubeconfig = res.Kubeconfig
	}
	if a.Kubeconfig == "" {
		a.Kubeconfig = stages.Kubeconfig(dir)
	}
	if !filepath.IsAbs(a.Kubeconfig) {
		a.Kubeconfig = filepath.Join(dir, a.Kubeconfig)
	}
	domain := ""
	if s != nil && s.Cluster.Name != "" && s.Cluster.BaseDomain != "" {
		domain = s.Cluster.Name + "." + s.Cluster.BaseDomain
	} else if b, err := fsroot.ReadFile(a.Kubeconfig, fsroot.Secret); err == nil {
		if m := serverLine.FindSubmatch(b); m != nil {
			host := strings.TrimPrefix(string(m[1]), "https://")
			host, _, _ = strings.Cut(host, ":")
			domain = strings.TrimPrefix(host, "api.")
		}
	}
	if domain != "" {
		a.Console = "https://console-openshift-console.apps." + domain
	}
	if pw := filepath.Join(dir, agentiso.InstallerDir, "auth", "kubeadmin-password"); fileExists(pw) {
		a.KubeadminPasswordFile = pw
	}
	if h := st.Stage(stages.NameHandoff); !h.Succeeded.IsZero() && len(h.Output) > 0 {
		if out, err := stages.HandoffOutputKey.Decode(h.Output); err == nil && out.URL != "" {
			a.ArgoCD = out.URL
			a.ArgoCDLogin = fmt.Sprintf(`"LOG IN VIA OPENSHIFT" as a cluster-admin, or user admin with the password from `+
				"`oc -n %s extract secret/%s --keys=admin.password --to=-`", handoff.ArgoNamespace, argoAdminSecret)
		}
	}
	return a
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// printAccess writes the access block: the lines to paste first.
func printAccess(w io.Writer, a *Access) {
	if a == nil {
		return
	}
	fmt.Fprintln(w, "\n"+progress.ClusterHeading(a.CheckedNow, a.Installed))
	fmt.Fprintf(w, "  export KUBECONFIG=%s\n", a.Kubeconfig)
	if a.Console != "" {
		fmt.Fprintf(w, "  console:  %s\n", a.Console)
		if a.KubeadminPasswordFile != "" {
			fmt.Fprintf(w, "            user kubeadmin, password in %s\n", a.KubeadminPasswordFile)
		}
	}
	if a.ArgoCD != "" {
		fmt.Fprintf(w, "  Argo CD:  %s\n", a.ArgoCD)
		fmt.Fprintf(w, "            log in with %s\n", a.ArgoCDLogin)
	}
}
