package upgrade

import (
	"fmt"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
)

// opState is an installed operator as the plan moves it along: its bundle, version and
// olm.maxOpenShiftVersion, with where those were read.
type opState struct {
	sub     Subscription
	name    string
	version semver.Version
	max     string
	from    string // where name/max were read
}

// NVIDIA operator packages the matrix covers.
const (
	gpuPackage     = "gpu-operator-certified"
	networkPackage = "nvidia-network-operator"
)

// gateAll runs the compatibility gate on every hop that changes minor, in order, carrying each
// operator's version forward through the steps planned.
func gateAll(p *Plan, c *Carried, st *State, m *Matrix) {
	cs := &catalogs{c: c, cache: map[string]*declcfg.DeclarativeConfig{}, errs: map[string]error{}}
	ops := make([]*opState, 0, len(st.Subscriptions))
	for _, s := range st.Subscriptions {
		o := &opState{sub: s, name: s.InstalledCSV, from: "Subscription " + s.Namespace + "/" + s.Name + " status.installedCSV"}
		if csv := st.csv(s.Namespace, s.InstalledCSV); csv != nil {
			o.version, _ = semver.ParseTolerant(csv.Version)
			o.max = csv.MaxOpenShift
			o.from = "CSV " + s.Namespace + "/" + csv.Name
		}
		ops = append(ops, o)
	}
	firstMinor := true
	for i := range p.Hops {
		h := &p.Hops[i]
		fm, tm := minorOfString(h.From), minorOfString(h.To)
		hopName := h.From + " -> " + h.To
		if len(st.Unmanaged) > 0 {
			h.Gate = append(h.Gate, Verdict{Check: "cvo-overrides", Subject: strings.Join(st.Unmanaged, ", "), Result: "block",
				Message: "unmanaged overrides: the CVO refuses every update while one is set; remove them from spec.overrides",
				Source:  "ClusterVersion spec.overrides (cluster state); CVO precondition ClusterVersionUpgradeable"})
		}
		if fm == tm {
			blockers(p, h, hopName)
			continue
		}
		if firstMinor && st.NotUpgradeable != nil {
			h.Gate = append(h.Gate, Verdict{Check: "upgradeable", Subject: "ClusterVersion", Result: "block",
				Message: fmt.Sprintf("Upgradeable=False (%s): %s; the CVO refuses a minor update until it clears", st.NotUpgradeable.Reason, st.NotUpgradeable.Message),
				Source:  "ClusterVersion status.conditions (cluster state); CVO precondition ClusterVersionUpgradeable"})
		}
		acks(p, h, st, fm, firstMinor)
		firstMinor = false
		// before the hop: what must change while the cluster runs fm; the NVIDIA checks see the
		// versions running during the hop; after it: the updates the tm catalog offers
		var after []*opState
		for _, o := range ops {
			if gateBefore(h, cs, o, fm, tm) {
				after = append(after, o)
			}
		}
		nvidia(p, h, ops, st, m, tm)
		for _, o := range after {
			gateAfter(p, h, cs, o, tm)
		}
		blockers(p, h, hopName)
	}
}

// blockers adds the hop's blocking verdicts to the plan's list.
func blockers(p *Plan, h *Hop, hopName string) {
	for _, v := range h.Gate {
		if v.Result == "block" {
			p.Blockers = append(p.Blockers, fmt.Sprintf("%s: %s: %s", hopName, v.Subject, v.Message))
		}
	}
}

// acks names the admin-acks the hop needs. The CVO blocks a minor update while a key
// "ack-<current minor>-..." of the admin-gates ConfigMap (delivered by the running release) is
// not "true" in openshift-config/admin-acks. Only the running release's gates are in the state.
func acks(p *Plan, h *Hop, st *State, fromMinor string, first bool) {
	if !first {
		p.Undecided = append(p.Undecided, fmt.Sprintf("admin-acks of hop %s -> %s: the admin-gates ConfigMap of %s is known only once the cluster runs it", h.From, h.To, h.From))
		return
	}
	if st.AdminGates == nil {
		p.Undecided = append(p.Undecided, fmt.Sprintf("admin-acks of hop %s -> %s: the state has no openshift-config-managed/admin-gates ConfigMap", h.From, h.To))
		return
	}
	if h.From != st.Version {
		p.Undecided = append(p.Undecided, fmt.Sprintf("admin-acks of hop %s -> %s: %s may add gates to those of the running %s", h.From, h.To, h.From, st.Version))
	}
	for _, k := range sortedKeys(st.AdminGates) {
		if !strings.HasPrefix(k, "ack-"+fromMinor+"-") {
			continue
		}
		a := Ack{Key: k, Message: st.AdminGates[k], Given: st.AdminAcks[k] == "true",
			Source: "ConfigMap openshift-config-managed/admin-gates of the running " + st.Version + " (cluster state)"}
		h.Acks = append(h.Acks, a)
		if !a.Given {
			h.Gate = append(h.Gate, Verdict{Check: "admin-ack", Subject: k, Result: "block",
				Message: fmt.Sprintf("not acknowledged: oc -n openshift-config patch cm admin-acks --type=merge -p '{\"data\":{\"%s\":\"true\"}}'", k),
				Source:  a.Source + "; openshift-config/admin-acks"})
		}
	}
}

// gateBefore checks an installed operator's olm.maxOpenShiftVersion against the hop's target
// minor and plans the update that lifts it from the source minor's catalog. It reports whether
// the operator may go on to gateAfter.
func gateBefore(h *Hop, cs *catalogs, o *opState, fm, tm string) bool {
	s := o.sub
	subj := s.Package + " (" + s.Namespace + "/" + s.Name + ")"
	if maxBelow(o.max, tm) {
		v := Verdict{Check: "maxOpenShiftVersion", Subject: subj, Result: "block",
			Message: fmt.Sprintf("%s declares olm.maxOpenShiftVersion %s: OLM sets Upgradeable=False (IncompatibleOperatorsInstalled) and the CVO refuses %s", o.name, o.max, tm),
			Source:  o.from}
		if dc, err := cs.get(fm, s.Source); dc != nil && err == nil {
			if es, bs, miss := channelOf(dc, s.Package, s.Channel); miss == "" {
				next, _ := reachable(es, bs, o.name, o.version)
				for _, b := range next {
					if !maxBelow(b.Max, tm) {
						h.Before = append(h.Before, Step{Subject: subj, Action: fmt.Sprintf("update %s -> %s (olm.maxOpenShiftVersion %s)", o.name, b.Name, orNone(b.Max)),
							Source: cs.rel(fm, s.Source) + " channel " + s.Channel, Image: b.Image, CSV: b.Name, before: true,
							bundle: &stepBundle{source: s.Source, pkg: s.Package, channel: s.Channel, name: b.Name, version: b.Version, defaultChannel: defaultChannel(dc, s.Package)}})
						o.name, o.version, o.max, o.from = b.Name, b.Version, b.Max, cs.rel(fm, s.Source)+" bundle "+b.Name
						v.Result, v.Message = "pass", fmt.Sprintf("updated to %s before the hop: olm.maxOpenShiftVersion %s", b.Name, orNone(b.Max))
						v.Source = cs.rel(fm, s.Source) + " channel " + s.Channel
						break
					}
				}
			}
		} else {
			v.Message += fmt.Sprintf("; no catalog %s carried to look for an update that lifts it", cs.rel(fm, s.Source))
		}
		h.Gate = append(h.Gate, v)
		return v.Result != "block"
	}
	h.Gate = append(h.Gate, Verdict{Check: "maxOpenShiftVersion", Subject: subj, Result: "pass",
		Message: fmt.Sprintf("%s: olm.maxOpenShiftVersion %s", o.name, orNone(o.max)), Source: o.from})
	return true
}

// gateAfter checks that the target minor's catalog has a bundle the installed one reaches by
// replaces/skips/skipRange, and plans the update to the newest after the hop.
func gateAfter(p *Plan, h *Hop, cs *catalogs, o *opState, tm string) {
	s := o.sub
	subj := s.Package + " (" + s.Namespace + "/" + s.Name + ")"
	rel := cs.rel(tm, s.Source)
	dc, err := cs.get(tm, s.Source)
	switch {
	case err != nil:
		h.Gate = append(h.Gate, Verdict{Check: "catalog", Subject: subj, Result: "block", Message: "catalog unreadable: " + err.Error(), Source: rel})
		return
	case dc == nil:
		h.Gate = append(h.Gate, Verdict{Check: "catalog", Subject: subj, Result: "unknown",
			Message: "the " + tm + " catalog " + s.Source + " is not carried: add it to the ImageSetConfiguration's mirror.operators for " + tm, Source: rel})
		p.Undecided = append(p.Undecided, fmt.Sprintf("%s: whether %s survives %s (catalog %s not carried)", h.From+" -> "+h.To, s.Package, tm, rel))
		return
	}
	es, bs, miss := channelOf(dc, s.Package, s.Channel)
	if miss != "" {
		h.Gate = append(h.Gate, Verdict{Check: "catalog", Subject: subj, Result: "block", Message: miss + " is not in the " + tm + " catalog", Source: rel})
		return
	}
	next, present := reachable(es, bs, o.name, o.version)
	switch {
	case len(next) > 0:
		head := next[0]
		h.Gate = append(h.Gate, Verdict{Check: "catalog", Subject: subj, Result: "pass",
			Message: fmt.Sprintf("%s reaches %s by replaces/skips/skipRange", o.name, head.Name), Source: rel + " channel " + s.Channel})
		h.After = append(h.After, Step{Subject: subj, Action: fmt.Sprintf("update %s -> %s", o.name, head.Name), Source: rel + " channel " + s.Channel, Image: head.Image, CSV: head.Name,
			bundle: &stepBundle{source: s.Source, pkg: s.Package, channel: s.Channel, name: head.Name, version: head.Version, defaultChannel: defaultChannel(dc, s.Package)}})
		o.name, o.version, o.max, o.from = head.Name, head.Version, head.Max, rel+" bundle "+head.Name
	case present:
		h.Gate = append(h.Gate, Verdict{Check: "catalog", Subject: subj, Result: "pass",
			Message: o.name + " is in the channel (no newer bundle)", Source: rel + " channel " + s.Channel})
	default:
		h.Gate = append(h.Gate, Verdict{Check: "catalog", Subject: subj, Result: "block",
			Message: fmt.Sprintf("no bundle of channel %s replaces, skips or has a skipRange covering %s: OLM would strand the operator", s.Channel, o.name),
			Source:  rel + " channel " + s.Channel})
	}
}

// nvidia checks the NVIDIA operators' declared OpenShift range and the GPU driver image of the
// target minor, from the matrix.
func nvidia(p *Plan, h *Hop, ops []*opState, st *State, m *Matrix, tm string) {
	for _, o := range ops {
		pkg := o.sub.Package
		if pkg != gpuPackage && pkg != networkPackage {
			continue
		}
		subj := pkg + " " + o.version.String()
		mv, ok := m.version(pkg, o.version.String())
		if !ok {
			h.Gate = append(h.Gate, Verdict{Check: "nvidia-range", Subject: subj, Result: "unknown",
				Message: "version not in the matrix: its OpenShift range is unknown", Source: m.cite(pkg, true)})
			p.Undecided = append(p.Undecided, fmt.Sprintf("%s: %s's OpenShift range (not in %s)", h.From+" -> "+h.To, subj, MatrixFile))
			continue
		}
		in := !maxBelow(mv.OpenShiftMax, tm) && !maxBelow(tm, mv.OpenShiftMin)
		v := Verdict{Check: "nvidia-range", Subject: subj, Result: "pass",
			Message: fmt.Sprintf("declares OpenShift %s-%s, which holds %s", mv.OpenShiftMin, mv.OpenShiftMax, tm),
			Source:  m.cite(fmt.Sprintf("%s %s", pkg, mv.Version), mv.Confirmed)}
		if !in {
			v.Result = "block"
			v.Message = fmt.Sprintf("declares OpenShift %s-%s, not %s: update the operator first to a version whose range holds %s and %s", mv.OpenShiftMin, mv.OpenShiftMax, tm, minorOfString(h.From), tm)
			if ok := m.bridging(pkg, minorOfString(h.From), tm); len(ok) > 0 {
				v.Message += " (" + strings.Join(ok, ", ") + " in the matrix)"
			}
		}
		h.Gate = append(h.Gate, v)
		if pkg != gpuPackage {
			continue
		}
		d, ok := m.driverOS(tm)
		if !ok {
			h.Gate = append(h.Gate, Verdict{Check: "gpu-driver", Subject: subj, Result: "unknown",
				Message: "no driver image OS suffix for " + tm + " in the matrix", Source: m.cite("driverImageOS", true)})
			continue
		}
		drv := DriverSpec{Repository: "nvcr.io/nvidia", Image: "driver", Version: mv.Driver}
		src := m.cite(fmt.Sprintf("default driver of %s %s, driverImageOS %s -> %s", pkg, mv.Version, tm, d.Suffix), d.Confirmed && mv.Confirmed)
		if st.Driver != nil {
			drv = *st.Driver
			src = "ClusterPolicy spec.driver (cluster state); " + m.cite("driverImageOS "+tm+" -> "+d.Suffix, d.Confirmed)
		}
		ref := fmt.Sprintf("%s/%s:%s-%s", drv.Repository, drv.Image, drv.Version, d.Suffix)
		h.Gate = append(h.Gate, Verdict{Check: "gpu-driver", Subject: subj, Result: "pass",
			Message: "the driver image for " + tm + " is " + ref + " (listed to carry)", Source: src})
		h.Before = append(h.Before, Step{Subject: subj, Action: "carry the driver image " + ref + " before the hop: GPU nodes rebuild their driver on the new OS", Source: src, Image: ref})
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func minorOfString(v string) string {
	sv, err := semver.Parse(v)
	if err != nil {
		return ""
	}
	return minorOf(sv)
}
