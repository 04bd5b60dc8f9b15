package upgrade

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"sigs.k8s.io/yaml"
)

// State is what the plan needs to know of the cluster, read from its objects.
type State struct {
	// File is where the state was read from ("" for a live cluster).
	File    string `json:"file,omitempty"`
	Version string `json:"version"` // the last Completed update in ClusterVersion's history
	Image   string `json:"image"`
	Channel string `json:"channel,omitempty"`
	Arch    string `json:"arch"` // the graph architecture: amd64, arm64, ... or multi
	// History is ClusterVersion's status.history, newest first, as versions and states.
	History       []HistoryEntry    `json:"history"`
	CSVs          []CSV             `json:"csvs,omitempty"`
	Subscriptions []Subscription    `json:"subscriptions,omitempty"`
	Nodes         []NodeInfo        `json:"nodes,omitempty"`
	Pools         []Pool            `json:"pools,omitempty"`
	AdminGates    map[string]string `json:"adminGates,omitempty"` // openshift-config-managed/admin-gates
	AdminAcks     map[string]string `json:"adminAcks,omitempty"`  // openshift-config/admin-acks
	// Driver is the NVIDIA ClusterPolicy's driver image, when the state holds one.
	Driver *DriverSpec `json:"driver,omitempty"`
	// NotUpgradeable is ClusterVersion's Upgradeable condition when False: the CVO refuses
	// minor updates while it holds (z-stream updates go on).
	NotUpgradeable *Condition `json:"notUpgradeable,omitempty"`
	// Unmanaged names the ClusterVersion spec.overrides set unmanaged: the CVO refuses every
	// update while there is one.
	Unmanaged []string `json:"unmanaged,omitempty"`
}

// Condition is a status condition's reason and message.
type Condition struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// HistoryEntry is one ClusterVersion history entry.
type HistoryEntry struct {
	State   string `json:"state"`
	Version string `json:"version"`
	Image   string `json:"image"`
	// Verified is the CVO's word that it verified the release's signature before applying it.
	Verified bool `json:"verified,omitempty"`
}

// CSV is an installed ClusterServiceVersion.
type CSV struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Version   string `json:"version,omitempty"`
	Phase     string `json:"phase,omitempty"`
	// MaxOpenShift is the olm.maxOpenShiftVersion of its operatorframework.io/properties
	// annotation, the one OLM reads to set Upgradeable=False.
	MaxOpenShift string `json:"maxOpenShiftVersion,omitempty"`
}

// Subscription is an OLM Subscription.
type Subscription struct {
	Namespace       string `json:"namespace"`
	Name            string `json:"name"`
	Package         string `json:"package"`
	Channel         string `json:"channel"`
	Source          string `json:"source"`
	SourceNamespace string `json:"sourceNamespace"`
	InstalledCSV    string `json:"installedCSV"`
}

// NodeInfo is a node's name, roles, architecture and OS.
type NodeInfo struct {
	Name    string   `json:"name"`
	Roles   []string `json:"roles"`
	Arch    string   `json:"arch"`
	OSImage string   `json:"osImage,omitempty"`
}

// Pool is a MachineConfigPool.
type Pool struct {
	Name   string `json:"name"`
	Paused bool   `json:"paused,omitempty"`
}

// DriverSpec is the driver image a ClusterPolicy names: repository/image:version-<os suffix>.
type DriverSpec struct {
	Repository string `json:"repository"`
	Image      string `json:"image"`
	Version    string `json:"version"`
}

// object is the part of any Kubernetes object read here.
type object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec   json.RawMessage   `json:"spec"`
	Status json.RawMessage   `json:"status"`
	Data   map[string]string `json:"data"`
	Items  []json.RawMessage `json:"items"`
}

// maxStateBytes bounds a captured state file.
const maxStateBytes = 256 << 20

// ParseState reads a captured cluster state: a Kubernetes List (YAML or JSON, what `oc get
// clusterversion,csv,subscriptions,nodes,machineconfigpools -A -o yaml` prints, with the
// admin-gates and admin-acks ConfigMaps and a ClusterPolicy when there are), or one object. A
// ClusterVersion is required; objects of other kinds are ignored.
func ParseState(file string, b []byte) (*State, error) {
	fix := "capture the state with: oc get clusterversion,clusterserviceversions,subscriptions,nodes,machineconfigpools -A -o yaml > state.yaml (add: oc get cm -n openshift-config-managed admin-gates -o yaml; oc get cm -n openshift-config admin-acks -o yaml; oc get clusterpolicy -o yaml)"
	if len(b) > maxStateBytes {
		return nil, refuse(ReasonState, file, fix, "%d bytes, more than a cluster state can be", len(b))
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return nil, refuse(ReasonState, file, fix, "not YAML or JSON: %v", err)
	}
	var objs []object
	if err := flatten(j, &objs, 0); err != nil {
		return nil, refuse(ReasonState, file, fix, "%v", err)
	}
	st := &State{File: file}
	var cv *object
	for i := range objs {
		o := &objs[i]
		if err := st.add(o); err != nil {
			return nil, refuse(ReasonState, file, fix, "%s %s: %v", o.Kind, o.Metadata.Name, err)
		}
		if o.Kind == "ClusterVersion" {
			cv = o
		}
	}
	if cv == nil {
		return nil, refuse(ReasonState, file, fix, "no ClusterVersion: the cluster's version and history are unknown")
	}
	st.sort()
	if err := st.clusterVersion(cv); err != nil {
		return nil, refuse(ReasonState, file, fix, "ClusterVersion: %v", err)
	}
	return st, nil
}

// flatten collects the objects of a List (nested Lists too) or the one object.
func flatten(j []byte, out *[]object, depth int) error {
	if depth > 4 {
		return fmt.Errorf("Lists nested more than 4 deep")
	}
	var o object
	if err := json.Unmarshal(j, &o); err != nil {
		return err
	}
	if strings.HasSuffix(o.Kind, "List") {
		for _, it := range o.Items {
			if err := flatten(it, out, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if o.Kind == "" {
		return fmt.Errorf("an object without kind")
	}
	*out = append(*out, o)
	return nil
}

func (st *State) add(o *object) error {
	md := o.Metadata
	switch o.Kind {
	case "ClusterServiceVersion":
		if md.Labels["olm.copiedFrom"] != "" {
			return nil // OLM's copy of an all-namespaces operator's CSV into every namespace
		}
		var spec struct{ Version string }
		var status struct{ Phase string }
		_ = json.Unmarshal(o.Spec, &spec)
		_ = json.Unmarshal(o.Status, &status)
		c := CSV{Namespace: md.Namespace, Name: md.Name, Version: spec.Version, Phase: status.Phase}
		if p := md.Annotations["operatorframework.io/properties"]; p != "" {
			max, err := maxOpenShift([]byte(p))
			if err != nil {
				return fmt.Errorf("annotation operatorframework.io/properties: %v", err)
			}
			c.MaxOpenShift = max
		}
		st.CSVs = append(st.CSVs, c)
	case "Subscription":
		var spec struct {
			Name, Channel, Source, SourceNamespace string
		}
		var status struct {
			InstalledCSV string `json:"installedCSV"`
		}
		_ = json.Unmarshal(o.Spec, &spec)
		_ = json.Unmarshal(o.Status, &status)
		st.Subscriptions = append(st.Subscriptions, Subscription{Namespace: md.Namespace, Name: md.Name,
			Package: spec.Name, Channel: spec.Channel, Source: spec.Source, SourceNamespace: spec.SourceNamespace,
			InstalledCSV: status.InstalledCSV})
	case "Node":
		var status struct {
			NodeInfo struct{ Architecture, OSImage string } `json:"nodeInfo"`
		}
		_ = json.Unmarshal(o.Status, &status)
		n := NodeInfo{Name: md.Name, Arch: status.NodeInfo.Architecture, OSImage: status.NodeInfo.OSImage}
		for l := range md.Labels {
			if r, ok := strings.CutPrefix(l, "node-role.kubernetes.io/"); ok {
				n.Roles = append(n.Roles, r)
			}
		}
		if n.Arch == "" {
			n.Arch = md.Labels["kubernetes.io/arch"]
		}
		sort.Strings(n.Roles)
		st.Nodes = append(st.Nodes, n)
	case "MachineConfigPool":
		var spec struct{ Paused bool }
		_ = json.Unmarshal(o.Spec, &spec)
		st.Pools = append(st.Pools, Pool{Name: md.Name, Paused: spec.Paused})
	case "ConfigMap":
		switch {
		case md.Namespace == "openshift-config-managed" && md.Name == "admin-gates":
			st.AdminGates = o.Data
		case md.Namespace == "openshift-config" && md.Name == "admin-acks":
			st.AdminAcks = o.Data
		}
	case "ClusterPolicy":
		var spec struct {
			Driver DriverSpec `json:"driver"`
		}
		_ = json.Unmarshal(o.Spec, &spec)
		if spec.Driver.Version != "" {
			st.Driver = &spec.Driver
		}
	}
	return nil
}

// maxOpenShift reads olm.maxOpenShiftVersion from an operatorframework.io/properties value.
func maxOpenShift(b []byte) (string, error) {
	var p struct {
		Properties []struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return "", err
	}
	for _, x := range p.Properties {
		if x.Type != "olm.maxOpenShiftVersion" {
			continue
		}
		// OLM accepts the value as a string or a number ("4.18" or 4.18)
		var s string
		if json.Unmarshal(x.Value, &s) != nil {
			s = string(x.Value)
		}
		return strings.TrimSpace(s), nil
	}
	return "", nil
}

// clusterVersion reads the version, channel and history. The current version is the newest
// Completed history entry; a newer Partial entry means an update is under way.
func (st *State) clusterVersion(o *object) error {
	var spec struct {
		Channel   string
		Overrides []struct {
			Kind, Namespace, Name string
			Unmanaged             bool
		}
	}
	var status struct {
		Desired struct {
			Architecture string
		}
		History    []HistoryEntry
		Conditions []struct{ Type, Status, Reason, Message string }
	}
	_ = json.Unmarshal(o.Spec, &spec)
	if err := json.Unmarshal(o.Status, &status); err != nil {
		return fmt.Errorf("status: %v", err)
	}
	st.Channel, st.History = spec.Channel, status.History
	for _, c := range status.Conditions {
		if c.Type == "Upgradeable" && c.Status == "False" {
			st.NotUpgradeable = &Condition{Reason: c.Reason, Message: c.Message}
		}
	}
	for _, ov := range spec.Overrides {
		if ov.Unmanaged {
			st.Unmanaged = append(st.Unmanaged, strings.TrimPrefix(ov.Kind+" "+ov.Namespace+"/"+ov.Name, " /"))
		}
	}
	for i, h := range status.History {
		if h.State != "Completed" {
			continue
		}
		if i > 0 {
			return fmt.Errorf("an update to %s is under way (history state %s): plan when it has completed", status.History[0].Version, status.History[0].State)
		}
		if _, err := semver.Parse(h.Version); err != nil {
			return fmt.Errorf("history version %q: %v", h.Version, err)
		}
		st.Version, st.Image = h.Version, h.Image
		break
	}
	if st.Version == "" {
		return fmt.Errorf("no Completed entry in status.history")
	}
	st.Arch = "amd64"
	if strings.EqualFold(status.Desired.Architecture, "Multi") {
		st.Arch = "multi"
	} else if len(st.Nodes) > 0 && st.Nodes[0].Arch != "" {
		st.Arch = st.Nodes[0].Arch
	}
	return nil
}

func (st *State) sort() {
	sort.Slice(st.CSVs, func(i, j int) bool {
		return st.CSVs[i].Namespace+"/"+st.CSVs[i].Name < st.CSVs[j].Namespace+"/"+st.CSVs[j].Name
	})
	sort.Slice(st.Subscriptions, func(i, j int) bool {
		a, b := st.Subscriptions[i], st.Subscriptions[j]
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	sort.Slice(st.Nodes, func(i, j int) bool { return st.Nodes[i].Name < st.Nodes[j].Name })
	sort.Slice(st.Pools, func(i, j int) bool { return st.Pools[i].Name < st.Pools[j].Name })
}

// csv finds an installed CSV by namespace and name.
func (st *State) csv(ns, name string) *CSV {
	for i := range st.CSVs {
		if st.CSVs[i].Namespace == ns && st.CSVs[i].Name == name {
			return &st.CSVs[i]
		}
	}
	return nil
}

// ReadState reads a captured state file (at most maxStateBytes).
func ReadState(path string) (*State, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, refuse(ReasonState, path, "pass --state the file a capture wrote", "%v", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxStateBytes+1))
	if err != nil {
		return nil, refuse(ReasonState, path, "", "%v", err)
	}
	return ParseState(path, b)
}
