package handoff

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
)

func obj(m map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: m} }

// operatorObjects are the Namespace, OperatorGroup and Subscription of OpenShift GitOps.
func operatorObjects(o Options) []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		obj(map[string]any{
			"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": OperatorNamespace,
				// As Red Hat's documentation installs it: the operator's metrics are scraped.
				"labels": map[string]any{"openshift.io/cluster-monitoring": "true"}},
		}),
		obj(map[string]any{
			"apiVersion": cluster.OperatorsV1, "kind": "OperatorGroup",
			"metadata": map[string]any{"name": OperatorPackage, "namespace": OperatorNamespace},
			// No targetNamespaces: the operator watches all namespaces, as it must.
			"spec": map[string]any{"upgradeStrategy": "Default"},
		}),
		obj(map[string]any{
			"apiVersion": cluster.OperatorsV1a1, "kind": "Subscription",
			"metadata": map[string]any{"name": OperatorPackage, "namespace": OperatorNamespace},
			"spec": map[string]any{
				"name": OperatorPackage, "channel": o.Channel,
				"source": o.Source, "sourceNamespace": o.SourceNamespace,
				"installPlanApproval": o.Approval,
			},
		}),
	}
}

// argoLabels make Argo CD's informers (which select app.kubernetes.io/part-of=argocd) see an object.
func argoLabels(extra map[string]any) map[string]any {
	l := map[string]any{"app.kubernetes.io/part-of": "argocd"}
	for k, v := range extra {
		l[k] = v
	}
	return l
}

func b64(s []byte) string { return base64.StdEncoding.EncodeToString(s) }

// repoObjects is the repository Secret and, for HTTPS, the server's CA in argocd-tls-certs-cm or,
// for SSH, known_hosts in argocd-ssh-known-hosts-cm. Secret values are sent as data (base64), not
// stringData, so a second server-side apply of the same values is a no-op.
func repoObjects(r Repo) ([]*unstructured.Unstructured, error) {
	host, ssh, err := repoHost(r.URL)
	if err != nil {
		return nil, err
	}
	data := map[string]any{"type": b64([]byte("git")), "url": b64([]byte(r.URL))}
	switch {
	case ssh && len(r.SSHPrivateKey) == 0:
		return nil, fmt.Errorf("handoff: %s is an SSH URL: set gitops.credentials.sshKeyFile", r.URL)
	case ssh && len(r.KnownHosts) == 0:
		return nil, fmt.Errorf("handoff: %s is an SSH URL: set gitops.credentials.knownHostsFile (host keys are verified)", r.URL)
	case ssh:
		data["sshPrivateKey"] = b64(r.SSHPrivateKey)
	case r.Username != "" || r.Password != "":
		data["username"] = b64([]byte(r.Username))
		data["password"] = b64([]byte(r.Password))
	}
	out := []*unstructured.Unstructured{obj(map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{"name": RepoSecretName, "namespace": ArgoNamespace,
			"labels": argoLabels(map[string]any{"argocd.argoproj.io/secret-type": "repository"})},
		"data": data,
	})}
	if !ssh && len(r.CA) > 0 {
		out = append(out, obj(map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "argocd-tls-certs-cm", "namespace": ArgoNamespace, "labels": argoLabels(nil)},
			// Argo CD keys server certificates by host name (without port).
			"data": map[string]any{host: strings.TrimSpace(string(r.CA)) + "\n"},
		}))
	}
	if ssh {
		out = append(out, obj(map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "argocd-ssh-known-hosts-cm", "namespace": ArgoNamespace, "labels": argoLabels(nil)},
			"data":     map[string]any{"ssh_known_hosts": strings.TrimSpace(string(r.KnownHosts)) + "\n"},
		}))
	}
	return out, nil
}

// repoHost returns the host name of a Git URL and whether it is reached over SSH
// (ssh://... or the scp-like git@host:path).
func repoHost(raw string) (string, bool, error) {
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" && u.Host != "" {
		switch u.Scheme {
		case "https", "http":
			return u.Hostname(), false, nil
		case "ssh":
			return u.Hostname(), true, nil
		default:
			return "", false, fmt.Errorf("handoff: gitops.repoURL %q: scheme %q, want https or ssh", raw, u.Scheme)
		}
	}
	if at, rest, ok := strings.Cut(raw, "@"); ok && at != "" {
		if host, _, ok := strings.Cut(rest, ":"); ok && host != "" {
			return host, true, nil
		}
	}
	return "", false, fmt.Errorf("handoff: gitops.repoURL %q is not an https://, ssh:// or user@host:path URL", raw)
}

// rootApplication is the app-of-apps: Argo CD syncs the profile's path, which holds the other
// Applications, automatically and with self-heal (the cluster now follows Git).
func rootApplication(o Options) *unstructured.Unstructured {
	return obj(map[string]any{
		"apiVersion": ArgoV1a1, "kind": "Application",
		"metadata": map[string]any{"name": o.RootApp.Name, "namespace": ArgoNamespace},
		"spec": map[string]any{
			"project": o.RootApp.Project,
			"source":  map[string]any{"repoURL": o.Repo.URL, "targetRevision": o.Repo.Revision, "path": o.Repo.Path},
			"destination": map[string]any{
				"server": "https://kubernetes.default.svc", "namespace": ArgoNamespace,
			},
			"syncPolicy": map[string]any{
				"automated":   map[string]any{"prune": true, "selfHeal": true},
				"syncOptions": []any{"CreateNamespace=true"},
				"retry":       map[string]any{"limit": int64(5)},
			},
		},
	})
}
