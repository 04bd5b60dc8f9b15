package harness

import (
	"fmt"
	"strings"
)

// The lab's cluster-config repository, laid out as a site lays its GitOps repository out:
//
//	cluster-config/argocd/            the root application's path: the Applications and the tenants ApplicationSet
//	cluster-config/applications/      one Application per area: operators, infra
//	cluster-config/base/operators/    GPU Operator, Network Operator, SR-IOV: Namespace, OperatorGroup, Subscription each
//	cluster-config/base/infra/        StorageClasses, the GPU fabric namespace and its network policy
//	cluster-config/overlays/prod/     base/infra for production: the default StorageClass, quotas
//	cluster-config/tenant-template/   Namespace, RBAC, NetworkPolicy, ResourceQuota with GPU limits
//	cluster-config/tenants/<name>/    tenant.yaml: the values the ApplicationSet stamps the template with
//
// (OpenShift's OAuth cluster config, which a production overlay patches too, is not served by the
// lab's API server: the testbin has no config.openshift.io OAuth CRD.)
const (
	// GitOpsPath is the root application's path.
	GitOpsPath = "cluster-config/argocd"
	// CatalogRedHat and CatalogCertified are the CatalogSources the mirror stage writes for the
	// lab's two operator catalogs (4.18), which the GitOps repository's Subscriptions name.
	CatalogRedHat    = "cs-redhat-operator-index-v4-18"
	CatalogCertified = "cs-certified-operator-index-v4-18"
)

// Tenant is one tenant the ApplicationSet stamps: its namespace is tenant-<Name>.
type Tenant struct {
	Name   string
	GPUs   int
	Admins string // the group bound to the admin ClusterRole in the namespace
}

// Tenants are the lab's tenants.
var Tenants = []Tenant{{Name: "vision", GPUs: 8, Admins: "vision-admins"}, {Name: "nlp", GPUs: 16, Admins: "nlp-admins"}}

// operatorSubs are the base/operators subscriptions: file, namespace, package, channel, catalog.
var operatorSubs = [][5]string{
	{"gpu-operator", "nvidia-gpu-operator", "gpu-operator-certified", "v25.3", CatalogCertified},
	{"network-operator", "nvidia-network-operator", "nvidia-network-operator", "stable", CatalogCertified},
	{"sriov-network-operator", "openshift-sriov-network-operator", "sriov-network-operator", "stable", CatalogRedHat},
}

// siteFiles is the repository's content for a repository at repoURL (Applications name it).
func siteFiles(repoURL string) map[string]string {
	f := map[string]string{
		"README.md": "# cluster-config\n\nThe lab site's GitOps repository. Argo CD syncs cluster-config/argocd (the root\n" +
			"application): the Applications in cluster-config/applications and one Application per tenant\n" +
			"in cluster-config/tenants, stamped from cluster-config/tenant-template.\n",
		GitOpsPath + "/kustomization.yaml":               kustomization("../applications", "tenants.yaml"),
		GitOpsPath + "/tenants.yaml":                     tenantsAppSet(repoURL),
		"cluster-config/applications/kustomization.yaml": kustomization("operators.yaml", "infra.yaml"),
		"cluster-config/applications/operators.yaml":     application(repoURL, "operators", "cluster-config/base/operators", "0"),
		"cluster-config/applications/infra.yaml":         application(repoURL, "infra", "cluster-config/overlays/prod", "1"),
		"cluster-config/base/infra/kustomization.yaml":   kustomization("storageclasses.yaml", "gpu-fabric.yaml"),
		"cluster-config/base/infra/storageclasses.yaml": `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-nvme
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Retain
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: shared-nfs
provisioner: nfs.csi.k8s.io
parameters:
  server: nfs.lab.example.com
  share: /export/datasets
reclaimPolicy: Delete
`,
		"cluster-config/base/infra/gpu-fabric.yaml": `apiVersion: v1
kind: Namespace
metadata:
  name: gpu-fabric
  labels:
    openshift.io/cluster-monitoring: "true"
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: fabric-only
  namespace: gpu-fabric
spec:
  podSelector: {}
  policyTypes: [Ingress]
  ingress:
  - from:
    - namespaceSelector:
        matchLabels:
          kubernetes.io/metadata.name: gpu-fabric
`,
		"cluster-config/overlays/prod/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- ../../base/infra
- limits.yaml
labels:
- pairs:
    site.lab.example.com/environment: prod
patches:
- target:
    kind: StorageClass
    name: local-nvme
  patch: |-
    - op: add
      path: /metadata/annotations
      value:
        storageclass.kubernetes.io/is-default-class: "true"
`,
		"cluster-config/overlays/prod/limits.yaml": `apiVersion: v1
kind: ResourceQuota
metadata:
  name: fabric
  namespace: gpu-fabric
spec:
  hard:
    pods: "50"
    requests.nvidia.com/gpu: "0"
`,
		"cluster-config/tenant-template/kustomization.yaml": kustomization("namespace.yaml", "rbac.yaml", "networkpolicy.yaml", "quota.yaml"),
		"cluster-config/tenant-template/namespace.yaml": `apiVersion: v1
kind: Namespace
metadata:
  name: tenant
  labels:
    site.lab.example.com/tenant: "true"
`,
		"cluster-config/tenant-template/rbac.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: tenant-admins
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: admin
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: Group
  name: tenant-admins
`,
		"cluster-config/tenant-template/networkpolicy.yaml": `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: same-namespace-only
spec:
  podSelector: {}
  policyTypes: [Ingress]
  ingress:
  - from:
    - podSelector: {}
`,
		"cluster-config/tenant-template/quota.yaml": `apiVersion: v1
kind: ResourceQuota
metadata:
  name: gpu
spec:
  hard:
    requests.nvidia.com/gpu: "0"
    limits.nvidia.com/gpu: "0"
    requests.cpu: "64"
    requests.memory: 512Gi
`,
	}
	var ops []string
	for _, s := range operatorSubs {
		file, ns, pkg, channel, catalog := s[0], s[1], s[2], s[3], s[4]
		ops = append(ops, file+".yaml")
		f["cluster-config/base/operators/"+file+".yaml"] = fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %[1]s
---
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata:
  name: %[1]s
  namespace: %[1]s
spec:
  targetNamespaces:
  - %[1]s
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata:
  name: %[2]s
  namespace: %[1]s
spec:
  name: %[2]s
  channel: %[3]s
  source: %[4]s
  sourceNamespace: openshift-marketplace
  installPlanApproval: Automatic
`, ns, pkg, channel, catalog)
	}
	f["cluster-config/base/operators/kustomization.yaml"] = kustomization(ops...)
	for _, t := range Tenants {
		f["cluster-config/tenants/"+t.Name+"/tenant.yaml"] = fmt.Sprintf("name: %s\ngpus: \"%d\"\nadmins: %s\n", t.Name, t.GPUs, t.Admins)
	}
	return f
}

func kustomization(resources ...string) string {
	return "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- " + strings.Join(resources, "\n- ") + "\n"
}

// application is a child of the root application, synced automatically.
func application(repoURL, name, path, wave string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %s
  namespace: openshift-gitops
  annotations:
    argocd.argoproj.io/sync-wave: %q
spec:
  project: default
  source:
    repoURL: %s
    targetRevision: main
    path: %s
  destination:
    server: https://kubernetes.default.svc
  syncPolicy:
    automated:
      prune: true
      selfHeal: true
`, name, wave, repoURL, path)
}

// tenantsAppSet stamps the tenant template once per cluster-config/tenants/<name>/tenant.yaml
// (Argo CD's Git files generator): the namespace tenant-<name>, its admins, its GPU quota.
func tenantsAppSet(repoURL string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: tenants
  namespace: openshift-gitops
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - git:
      repoURL: %[1]s
      revision: main
      files:
      - path: cluster-config/tenants/*/tenant.yaml
  template:
    metadata:
      name: 'tenant-{{.name}}'
      labels:
        site.lab.example.com/tenant: '{{.name}}'
    spec:
      project: default
      source:
        repoURL: %[1]s
        targetRevision: main
        path: cluster-config/tenant-template
        kustomize:
          namespace: 'tenant-{{.name}}'
          patches:
          - target:
              kind: Namespace
            patch: |-
              - op: replace
                path: /metadata/name
                value: tenant-{{.name}}
          - target:
              kind: RoleBinding
            patch: |-
              - op: replace
                path: /subjects/0/name
                value: {{.admins}}
          - target:
              kind: ResourceQuota
            patch: |-
              - op: replace
                path: /spec/hard/requests.nvidia.com~1gpu
                value: "{{.gpus}}"
              - op: replace
                path: /spec/hard/limits.nvidia.com~1gpu
                value: "{{.gpus}}"
      destination:
        server: https://kubernetes.default.svc
        namespace: 'tenant-{{.name}}'
      syncPolicy:
        automated:
          prune: true
          selfHeal: true
`, repoURL)
}
