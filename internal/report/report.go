// Package report renders the evidence bundle from the journal and the work dir: what ran when,
// every step with its recorded data (digests, nodes, BMC actions), every file generated with its
// SHA-256, and whether the journal's hash chain verifies. It reads; it never changes anything.
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/filehash"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/units"
)

// Report is the evidence of one work dir.
type Report struct {
	Generated time.Time `json:"generated"`
	Site      string    `json:"site,omitempty"`
	// Summary is what an auditor reads first: site, release, nodes, mirror, verdict.
	Summary Summary `json:"summary"`
	WorkDir string  `json:"workDir"`
	Chain   Chain   `json:"chain"`
	// Stages is each stage as it stands now (its latest attempt).
	Stages []pipeline.StageStatus `json:"stages"`
	// History is every run and every attempt of every stage, failed, killed and resumed ones
	// included, with each execution and the steps it journaled.
	History  pipeline.History `json:"history"`
	Files    []File           `json:"files"`
	Evidence Evidence         `json:"evidence"`
	// Upgrade is the day-2 upgrades' evidence, when `upgrade run` ran in this work dir.
	Upgrade  *Upgrade `json:"upgrade,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// Chain is the journal's integrity: Verified false means an entry was edited or removed.
type Chain struct {
	Verified bool   `json:"verified"`
	Entries  int    `json:"entries"`
	Head     string `json:"head,omitempty"`
	Error    string `json:"error,omitempty"`
}

// File is one file the run generated in the work dir.
type File struct {
	Path   string    `json:"path"` // relative to the work dir
	Size   int64     `json:"size"`
	SHA256 string    `json:"sha256"`
	Mod    time.Time `json:"modified"`
}

// skipFiles are the run's own bookkeeping, not its products.
var skipFiles = map[string]bool{pipeline.JournalFile: true, pipeline.HeadFile: true, pipeline.LockFile: true, pipeline.LockFile + ".guard": true, "bootstrap.log": true}

// Build reads the journal through r (for stage order and status) and hashes the work dir's files.
func Build(r *pipeline.Runner, siteName string) (*Report, error) {
	st, entries, err := r.StatusEntries()
	if err != nil {
		return nil, err
	}
	h := pipeline.BuildHistory(entries)
	if st.Lock == nil || !pipeline.LockAlive(*st.Lock) {
		h.MarkKilled()
	}
	rep := &Report{
		Generated: time.Now().UTC(),
		Site:      siteName,
		WorkDir:   r.WorkDir,
		Chain:     Chain{Verified: st.Chain == "", Entries: st.Entries, Head: st.Head, Error: st.Chain},
		Stages:    st.Stages,
		History:   h,
		Warnings:  st.Warnings,
	}
	countStepsOnce(rep.Stages, h)
	rep.Files, err = hashFiles(r.WorkDir)
	if err != nil {
		return nil, err
	}
	rep.Evidence = readEvidence(r.WorkDir, h)
	if rep.Upgrade, err = readUpgrade(r.WorkDir); err != nil {
		rep.Warnings = append(rep.Warnings, err.Error())
	}
	rep.Summary = summarize(rep, r.Site)
	return rep, nil
}

func hashFiles(dir string) ([]File, error) {
	var files []File
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() || skipFiles[rel] || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		sum, _, err := filehash.SHA256(path)
		if err != nil {
			return err
		}
		files = append(files, File{Path: filepath.ToSlash(rel), Size: info.Size(), SHA256: sum, Mod: info.ModTime().UTC()})
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, err
}

// JSON writes the report as indented JSON.
func (r *Report) JSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Markdown writes the report for people and change-control records.
func (r *Report) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# bootstrap evidence report: %s\n\n", or(r.Site, "(no site)"))
	fmt.Fprintf(&b, "Generated %s from `%s`; %d run(s).\n\n", r.Generated.Format(time.RFC3339), r.WorkDir, len(r.History.Runs))
	sum := r.Summary
	b.WriteString("## Summary\n\n")
	fmt.Fprintf(&b, "- **Verdict:** %s\n", sum.Verdict)
	if sum.Cluster != "" {
		fmt.Fprintf(&b, "- **Cluster:** %s, OpenShift %s\n", sum.Cluster, or(sum.Release, "-"))
	}
	fmt.Fprintf(&b, "- **Release image:** `%s`\n", or(sum.ReleaseImage, "not recorded yet"))
	fmt.Fprintf(&b, "- **Mirrored:** %d images, %s", sum.Images, units.Bytes(sum.ImageBytes))
	if sum.ImagesFailed > 0 {
		fmt.Fprintf(&b, ", %d failed", sum.ImagesFailed)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "- **Journal:** %s\n\n", chainText(r.Chain))
	if len(sum.Defaults) > 0 {
		b.WriteString("Defaults bootstrap chose for what the profile leaves out:\n\n")
		for _, c := range sum.Defaults {
			fmt.Fprintf(&b, "- `%s`: %s\n", c.Path, c.Value)
		}
		b.WriteString("\n")
	}
	if len(sum.Nodes) > 0 {
		b.WriteString("| node | role | MACs | root disk | BMC firmware | virtual media | power actions | BMC actions | install |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, n := range sum.Nodes {
			fmt.Fprintf(&b, "| %s | %s | %s | `%s` | %s | %s | %d | %d | %s |\n", n.Name, or(n.Role, "-"), strings.Join(n.MACs, " "),
				or(n.RootDisk, "-"), or(n.BMCFirmware, "-"), or(n.Media, "-"), n.PowerActions, n.Actions, or(n.Install, "-"))
		}
		b.WriteString("\n")
	}
	if r.Chain.Entries == 0 {
		b.WriteString("Journal: no entries: nothing has run in this work dir.\n\n")
	} else if r.Chain.Verified {
		fmt.Fprintf(&b, "Journal: %d entries, hash chain **verified**, head `%s`.\n\n", r.Chain.Entries, r.Chain.Head)
	} else {
		fmt.Fprintf(&b, "Journal: %d entries, **HASH CHAIN BROKEN**: %s\n\n", r.Chain.Entries, r.Chain.Error)
	}
	b.WriteString("## Stages now\n\n| stage | state | attempt | steps | started | finished | seconds |\n|---|---|---|---|---|---|---|\n")
	for _, s := range r.Stages {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %.1f |\n", s.Name, s.State, s.Attempt, s.Steps, ts(s.Started), ts(s.Finished), s.Seconds)
	}
	b.WriteString("\n## Runs\n\n| run | command | started | finished | result | ran | skipped | error |\n|---|---|---|---|---|---|---|---|\n")
	for _, run := range r.History.Runs {
		fmt.Fprintf(&b, "| %d | %s (by %s) | %s | %s | %s | %s | %s | %s |\n", run.Seq, cell([]byte(runCommand(run.Info))), runBy(run.Info), ts(run.Started),
			ts(run.Finished), run.Result, strings.Join(run.Ran, " "), strings.Join(run.Skipped, " "), cell([]byte(run.Error)))
	}
	b.WriteString("\n## Attempts\n\nEvery execution of every attempt, oldest first.\n\n" +
		"| stage | attempt | run | started | finished | seconds | result | steps | reason / error |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, a := range r.History.Attempts {
		for _, x := range a.Executions {
			note := x.Reason
			if x.Error != "" {
				note = x.Error
			}
			fmt.Fprintf(&b, "| %s | %d%s | %d | %s | %s | %.1f | %s | %d | %s |\n", a.Stage, a.Attempt, latestMark(a), x.Run,
				ts(x.Started), ts(x.Finished), x.Seconds, x.State, x.Steps, cell([]byte(note)))
		}
	}
	for _, a := range r.History.Attempts {
		if len(a.Steps) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n### %s attempt %d%s: %s\n\n| seq | run | time | step | data |\n|---|---|---|---|---|\n",
			a.Stage, a.Attempt, latestMark(a), stepsText(a))
		for _, st := range a.Steps {
			fmt.Fprintf(&b, "| %d | %d | %s | `%s` | %s |\n", st.Seq, st.Run, ts(st.Time), st.Key, fieldsText(st.Data))
		}
	}
	ev := r.Evidence
	if len(ev.Preflight) > 0 {
		b.WriteString("\n## Preflight\n\n| check | category | status | message | remedy |\n|---|---|---|---|---|\n")
		for _, c := range ev.Preflight {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", c.Name, c.Category, c.Status, cell([]byte(c.Message)), cell([]byte(c.Remedy)))
		}
	}
	if len(ev.Images) > 0 {
		fmt.Fprintf(&b, "\n## Images mirrored: %d\n\n| source | destination | digest | bytes |\n|---|---|---|---|\n", len(ev.Images))
		for _, im := range ev.Images {
			fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | %d |\n", im.Source, im.Destination, im.Digest, im.Size)
		}
	}
	if len(ev.BMC) > 0 {
		b.WriteString("\n## BMC actions\n")
		for _, n := range ev.BMC {
			fmt.Fprintf(&b, "\n### %s\n\n| seq | time | stage | attempt | run | action | result |\n|---|---|---|---|---|---|---|\n", n.Node)
			for _, a := range n.Actions {
				res := fieldsText(a.Data)
				if a.Note != "" {
					res = a.Note + " " + res
				}
				fmt.Fprintf(&b, "| %d | %s | %s | %d | %d | %s | %s |\n", a.Seq, ts(a.Time), a.Stage, a.Attempt, a.Run, a.Action, res)
			}
		}
	}
	if len(ev.Boot) > 0 {
		b.WriteString("\n## Boot evidence per node\n\nA node is booted with evidence of a reboot into the ISO; where none could be seen it is \"booted, unverified\" and says why.\n\n| node | boot | evidence | unverified: why | attempt |\n|---|---|---|---|---|\n")
		for _, n := range ev.Boot {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %d |\n", n.Node, n.State, pipes(or(strings.Join(n.Evidence, "; "), "none")), pipes(or(n.Unverified, "-")), n.Attempt)
		}
	}
	if len(ev.Persistent) > 0 {
		b.WriteString("\n## Nodes booted with a persistent boot override\n\nTheir BMC did not honour a one-time boot; the install stage takes the override off once the node has written its disk.\n\n| node | why | handed over to its disk |\n|---|---|---|\n")
		for _, p := range ev.Persistent {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", p.Node, cell([]byte(p.Reason)), or(p.HandedOver, "NOT YET: the node would boot the ISO again on its next reboot"))
		}
	}
	if len(ev.Applied) > 0 {
		b.WriteString("\n## Manifests applied\n\n| time | stage | attempt | run | object | action | sha256 | source |\n|---|---|---|---|---|---|---|---|\n")
		for _, m := range ev.Applied {
			sum := "`" + m.SHA256 + "`"
			if m.SHA256 == "" && m.Kind == "Secret" {
				sum = SecretNotHashed
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %s | %s |\n", ts(m.Time), m.Stage, m.Attempt, m.Run, m.Object(), m.Action, sum, m.Source)
		}
	}
	if len(ev.Versions) > 0 {
		b.WriteString("\n## Tools and peers\n\n| component | version | detail | recorded by |\n|---|---|---|---|\n")
		for _, v := range ev.Versions {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", v.Component, v.Version, cell([]byte(v.Detail)), v.Source)
		}
	}
	upgradeMarkdown(&b, r.Upgrade)
	b.WriteString("\n## Files generated\n\n| file | bytes | sha256 |\n|---|---|---|\n")
	for _, f := range r.Files {
		fmt.Fprintf(&b, "| `%s` | %d | `%s` |\n", f.Path, f.Size, f.SHA256)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "\nwarning: %s\n", w)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// runCommand describes what a run was asked to do.
func runCommand(ri pipeline.RunInfo) string {
	parts := []string{"bootstrap"}
	if ri.Mode == "replay" {
		parts = append(parts, "replay", ri.Stage)
		for _, n := range ri.Nodes {
			parts = append(parts, "--node", n)
		}
	} else {
		parts = append(parts, or(ri.Mode, "run"))
		if ri.From != "" {
			parts = append(parts, "--from", ri.From)
		}
		if ri.Until != "" {
			parts = append(parts, "--until", ri.Until)
		}
	}
	return strings.Join(parts, " ")
}

// runBy says who ran a run, where: "alice@jump-1 (pid 4242), bootstrap v1.2.3".
func runBy(ri pipeline.RunInfo) string {
	who := or(ri.User, "unknown user") + "@" + or(ri.Host, "unknown host")
	if ri.PID != 0 {
		who += fmt.Sprintf(" (pid %d)", ri.PID)
	}
	return who + ", bootstrap " + or(ri.Version, "(unknown version)")
}

// chainText is the journal's integrity in words; an empty journal is "no entries", not verified.
func chainText(c Chain) string {
	switch {
	case c.Entries == 0:
		return "no entries: nothing has run in this work dir"
	case c.Verified:
		return fmt.Sprintf("%d entries, hash chain verified, head %s", c.Entries, c.Head)
	}
	return fmt.Sprintf("%d entries, HASH CHAIN BROKEN: %s", c.Entries, c.Error)
}

func latestMark(a pipeline.AttemptRecord) string {
	if a.Latest {
		return " (latest)"
	}
	return ""
}

func ts(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func cell(raw json.RawMessage) string {
	s := strings.ReplaceAll(string(raw), "|", "\\|")
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}

// pipes escapes a Markdown table cell without shortening it (a caveat's reason is read whole).
func pipes(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
