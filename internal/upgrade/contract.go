package upgrade

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/blang/semver/v4"
)

// Contract is the rollback contract of one hop: what can be undone, when, and how, as the
// product allows it. It is printed before a run and journaled as accepted (its SHA-256 and who
// accepted it), so nobody is promised a rollback OpenShift cannot give.
func Contract(h Hop, backup string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Rollback contract for the hop %s -> %s\n", h.From, h.To)
	b.WriteString("  1. Before spec.desiredUpdate is set, the hop aborts fully: the canary pool is removed, the paused pools unpaused; nothing of the update was started.\n")
	b.WriteString("  2. During the hop, stop freezes the remaining pools (they stay paused) and drains no further node than the canary; the control plane finishes the update it started.\n")
	if zstream(h) {
		fmt.Fprintf(&b, "  3. This hop stays within %s: a rollback to the previous history entry (%s) may be offered, with the CVO's own warning that z-stream rollbacks are not supported for clusters in production and may leave it unrecoverable.\n", minorStr(h.To), h.From)
	} else {
		fmt.Fprintf(&b, "  3. This hop crosses minors (%s -> %s): no rollback; the CVO refuses to roll back across a minor. The only way back is the etcd restore of step 4.\n", minorStr(h.From), minorStr(h.To))
	}
	if backup == "" {
		backup = "the hop's pre-update etcd backup (its file and SHA-256 are journaled before desiredUpdate is set)"
	}
	fmt.Fprintf(&b, "  4. An etcd restore is a guided runbook, destructive and a last resort (every change since the backup is lost): it names %s.\n", backup)
	b.WriteString("  5. OLM operators only go forward: an operator updated during or after the hop is not downgraded.\n")
	return b.String()
}

// ContractSum is the SHA-256 of a contract's text, journaled with its acceptance.
func ContractSum(text string) string {
	s := sha256.Sum256([]byte(text))
	return hex.EncodeToString(s[:])
}

func zstream(h Hop) bool { return minorStr(h.From) == minorStr(h.To) && minorStr(h.To) != "" }

func minorStr(v string) string {
	s, err := semver.Parse(v)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d.%d", s.Major, s.Minor)
}
