package preflight

import (
	"slices"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

// The pipeline's stage names a check can be needed by. They are stable words (CLI arguments and
// journal keys); preflight names them here rather than importing the stages (which import it).
const (
	StageMirror    = "mirror"
	StageISO       = "iso"
	StageBoot      = "boot"
	StageInstall   = "install"
	StageConfigure = "configure"
	StageHandoff   = "handoff"
)

// NeededBy is the stages that need what a check looks at: a failure blocks a run only when one
// of them is among the stages it will run. The registry is the mirror's destination and where the
// nodes pull from; a BMC is boot's; DNS, NTP and the VIPs are the cluster's; Git is handoff's.
// Referenced files are needed by the stage that reads them, named by their field path. A check
// this does not know is needed by every stage.
func NeededBy(name string, cat Category) []string {
	switch cat {
	case CategoryBMC:
		return []string{StageBoot}
	case CategoryGit:
		return []string{StageHandoff}
	case CategoryDNS:
		return []string{StageInstall, StageConfigure, StageHandoff}
	case CategoryNTP, CategoryNetwork:
		return []string{StageInstall}
	case CategoryRegistry:
		return []string{StageMirror, StageInstall}
	case CategoryJumpHost:
		switch {
		case strings.HasPrefix(name, "disk "):
			return []string{StageMirror, StageISO}
		case strings.HasPrefix(name, "iso "):
			return []string{StageBoot, StageInstall}
		}
	case CategoryFiles:
		field := name[strings.IndexByte(name, ' ')+1:]
		switch {
		case strings.Contains(field, ".bmc."):
			return []string{StageBoot}
		case strings.HasPrefix(field, "gitops."):
			return []string{StageHandoff}
		case strings.HasPrefix(field, "registry.") || strings.HasPrefix(field, "mirror."):
			return []string{StageMirror, StageISO}
		case strings.HasPrefix(field, "cluster.") || strings.HasPrefix(field, "iso.") || strings.HasPrefix(field, "nodes"):
			return []string{StageISO}
		}
	}
	return nil
}

// Scoped marks which failures block a run of the stages selected (nil: every stage): a failed
// check none of whose stages is selected is shown, counted as not blocking, and does not fail
// the run. Summary.Fail counts the blocking failures only.
func (r Report) Scoped(selected []string) Report {
	out := Report{Checks: slices.Clone(r.Checks), Scope: selected}
	for i := range out.Checks {
		c := &out.Checks[i]
		c.Blocking = c.Status == finding.Fail && blocks(c.NeededBy, selected)
		switch {
		case c.Status == finding.Pass:
			out.Summary.Pass++
		case c.Status == finding.Warn:
			out.Summary.Warn++
		case c.Blocking:
			out.Summary.Fail++
		default:
			out.Summary.NotBlocking++
		}
	}
	return out
}

// blocks reports whether a check needed by needs matters to a run of selected.
func blocks(needs, selected []string) bool {
	if needs == nil || selected == nil {
		return true
	}
	for _, s := range needs {
		if slices.Contains(selected, s) {
			return true
		}
	}
	return false
}

// proceed is the longest run of the selected stages, from the first, that no blocking failure
// is needed by: what a narrower run could do now. Empty when the first stage is blocked.
func (r Report) proceed() (ok, blocked []string) {
	need := map[string]bool{}
	all := false
	for _, c := range r.Checks {
		if !c.Blocking {
			continue
		}
		if c.NeededBy == nil {
			all = true
		}
		for _, s := range c.NeededBy {
			need[s] = true
		}
	}
	for _, s := range r.Scope {
		if need[s] {
			blocked = append(blocked, s)
		}
	}
	if all || r.Scope == nil {
		return nil, blocked
	}
	for _, s := range r.Scope {
		if need[s] {
			break
		}
		ok = append(ok, s)
	}
	return ok, blocked
}
