package preflight

import (
	"slices"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

// The pipeline's stage names a check can be needed by. They are stable words (CLI arguments and
// journal keys); preflight names them here rather than importing the stages (which import it).
const (
	stageMirror    = "mirror"
	stageISO       = "iso"
	stageBoot      = "boot"
	stageInstall   = "install"
	stageConfigure = "configure"
	stageHandoff   = "handoff"
)

// stagesNeeding is the stages that need what a check looks at: a failure blocks a run only when one
// of them is among the stages it will run. The registry is the mirror's destination and where the
// nodes pull from; a BMC is boot's; DNS, NTP and the VIPs are the cluster's; Git is handoff's.
// Referenced files are needed by the stage that reads them, named by their field path. A check
// this does not know is needed by every stage.
func stagesNeeding(name string, cat Category) []string {
	switch cat {
	case CategoryBMC:
		return []string{stageBoot}
	case CategoryGit:
		return []string{stageHandoff}
	case CategoryDNS:
		return []string{stageInstall, stageConfigure, stageHandoff}
	case CategoryNTP, CategoryNetwork:
		return []string{stageInstall}
	case CategoryRegistry:
		return []string{stageMirror, stageInstall}
	case CategoryJumpHost:
		switch {
		case strings.HasPrefix(name, "disk "):
			return []string{stageMirror, stageISO}
		case strings.HasPrefix(name, "iso "):
			return []string{stageBoot, stageInstall}
		}
	case CategoryFiles:
		field := name[strings.IndexByte(name, ' ')+1:]
		switch {
		case strings.Contains(field, ".bmc."):
			return []string{stageBoot}
		case strings.HasPrefix(field, "gitops."):
			return []string{stageHandoff}
		case strings.HasPrefix(field, "registry.") || strings.HasPrefix(field, "mirror."):
			return []string{stageMirror, stageISO}
		case strings.HasPrefix(field, "cluster.") || strings.HasPrefix(field, "iso.") || strings.HasPrefix(field, "nodes"):
			return []string{stageISO}
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
