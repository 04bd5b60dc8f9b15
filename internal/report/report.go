// Package report renders the evidence bundle from the journal and the work dir: what ran when,
// every step with its recorded data (digests, nodes, BMC actions), every file generated with its
// SHA-256, and whether the journal's hash chain verifies. It reads; it never changes anything.
package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// Report is the evidence of one work dir.
type Report struct {
	Generated time.Time              `json:"generated"`
	Site      string                 `json:"site,omitempty"`
	WorkDir   string                 `json:"workDir"`
	Chain     Chain                  `json:"chain"`
	Runs      int                    `json:"runs"`
	Stages    []pipeline.StageStatus `json:"stages"`
	Steps     map[string][]Step      `json:"steps"`
	Files     []File                 `json:"files"`
	Evidence  Evidence               `json:"evidence"`
	Warnings  []string               `json:"warnings,omitempty"`
}

// Chain is the journal's integrity: Verified false means an entry was edited or removed.
type Chain struct {
	Verified bool   `json:"verified"`
	Entries  int    `json:"entries"`
	Head     string `json:"head,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Step is one journaled step of the current attempt of a stage.
type Step struct {
	Seq  int64           `json:"seq"`
	Time time.Time       `json:"time"`
	Key  string          `json:"key"`
	Data json.RawMessage `json:"data,omitempty"`
}

// File is one file the run generated in the work dir.
type File struct {
	Path   string    `json:"path"` // relative to the work dir
	Size   int64     `json:"size"`
	SHA256 string    `json:"sha256"`
	Mod    time.Time `json:"modified"`
}

// skipFiles are the run's own bookkeeping, not its products.
var skipFiles = map[string]bool{pipeline.JournalFile: true, pipeline.LockFile: true, pipeline.LockFile + ".guard": true, "bootstrap.log": true}

// Build reads the journal through r (for stage order and status) and hashes the work dir's files.
func Build(r *pipeline.Runner, siteName string) (*Report, error) {
	st, err := r.Status()
	if err != nil {
		return nil, err
	}
	entries, _, err := pipeline.ReadJournal(pipeline.JournalPath(r.WorkDir))
	var ce *pipeline.ChainError
	if err != nil && !errors.As(err, &ce) {
		return nil, err
	}
	rep := &Report{
		Generated: time.Now().UTC(),
		Site:      siteName,
		WorkDir:   r.WorkDir,
		Chain:     Chain{Verified: st.Chain == "", Entries: st.Entries, Head: st.Head, Error: st.Chain},
		Runs:      st.Runs,
		Stages:    st.Stages,
		Steps:     currentSteps(entries, st),
		Warnings:  st.Warnings,
	}
	rep.Files, err = hashFiles(r.WorkDir)
	if err != nil {
		return nil, err
	}
	rep.Evidence = readEvidence(r.WorkDir, entries, rep.Steps)
	return rep, nil
}

// currentSteps keeps the step-done entries of each stage's current attempt.
func currentSteps(entries []pipeline.Entry, st pipeline.Status) map[string][]Step {
	attempt := map[string]int{}
	for _, s := range st.Stages {
		attempt[s.Name] = s.Attempt
	}
	out := map[string][]Step{}
	for _, e := range entries {
		if e.Kind != pipeline.EntryStepDone || e.Attempt != attempt[e.Stage] {
			continue
		}
		out[e.Stage] = append(out[e.Stage], Step{Seq: e.Seq, Time: e.Time, Key: e.Step, Data: e.Data})
	}
	return out
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
		sum, err := hashFile(path)
		if err != nil {
			return err
		}
		files = append(files, File{Path: filepath.ToSlash(rel), Size: info.Size(), SHA256: sum, Mod: info.ModTime().UTC()})
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, err
}

func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
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
	fmt.Fprintf(&b, "Generated %s from `%s`.\n\n", r.Generated.Format(time.RFC3339), r.WorkDir)
	if r.Chain.Verified {
		fmt.Fprintf(&b, "Journal: %d entries, hash chain **verified**, head `%s`.\n\n", r.Chain.Entries, r.Chain.Head)
	} else {
		fmt.Fprintf(&b, "Journal: %d entries, **HASH CHAIN BROKEN**: %s\n\n", r.Chain.Entries, r.Chain.Error)
	}
	b.WriteString("## Stages\n\n| stage | state | attempt | steps | started | finished | seconds |\n|---|---|---|---|---|---|---|\n")
	for _, s := range r.Stages {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %.1f |\n", s.Name, s.State, s.Attempt, s.Steps, ts(s.Started), ts(s.Finished), s.Seconds)
	}
	for _, s := range r.Stages {
		steps := r.Steps[s.Name]
		if len(steps) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s: %d steps\n\n| seq | time | step | data |\n|---|---|---|---|\n", s.Name, len(steps))
		for _, st := range steps {
			fmt.Fprintf(&b, "| %d | %s | `%s` | %s |\n", st.Seq, ts(st.Time), st.Key, cell(st.Data))
		}
	}
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

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
