package clustertest

// The resources the tests read and write, by the name they are listed under.
var (
	Namespaces             = GVR("", "v1", "namespaces")
	Nodes                  = GVR("", "v1", "nodes")
	Secrets                = GVR("", "v1", "secrets")
	Deployments            = GVR("apps", "v1", "deployments")
	Routes                 = GVR("route.openshift.io", "v1", "routes")
	ClusterVersions        = GVR("config.openshift.io", "v1", "clusterversions")
	ClusterOperators       = GVR("config.openshift.io", "v1", "clusteroperators")
	MachineConfigs         = GVR("machineconfiguration.openshift.io", "v1", "machineconfigs")
	MachineConfigPools     = GVR("machineconfiguration.openshift.io", "v1", "machineconfigpools")
	CatalogSources         = GVR("operators.coreos.com", "v1alpha1", "catalogsources")
	Subscriptions          = GVR("operators.coreos.com", "v1alpha1", "subscriptions")
	InstallPlans           = GVR("operators.coreos.com", "v1alpha1", "installplans")
	ClusterServiceVersions = GVR("operators.coreos.com", "v1alpha1", "clusterserviceversions")
	Applications           = GVR("argoproj.io", "v1alpha1", "applications")
	ArgoCDs                = GVR("argoproj.io", "v1beta1", "argocds")
)
