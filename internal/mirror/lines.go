package mirror

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/units"
)

// What a run has to say, as lines: produced here once, drawn by `bootstrap mirror` (stdout and
// stderr) and by the mirror stage (plan lines and events). The package still never prints.

// Lines is the plan as text: the totals, what the platform filter leaves out, then one line per
// image (copy, present, or ERROR and why).
func (p *PlanResult) Lines() []string {
	lines := []string{fmt.Sprintf("%d images, %d unique blobs, %s unique (%s with repeats, %s saved by dedup), %s present, %s to copy (also the disk a file:// run needs)",
		len(p.Images), p.UniqueBlobs, units.Bytes(p.UniqueBytes), units.Bytes(p.TotalBytes), units.Bytes(p.SavedBytes), units.Bytes(p.PresentBytes), units.Bytes(p.ToCopyBytes))}
	if p.FilteredPlatforms > 0 {
		lines = append(lines, fmt.Sprintf("%d platform image(s) of multi-arch indexes filtered out; if the registry refuses sparse indexes (distribution by default, Quay without FEATURE_SPARSE_INDEX), they are copied too: %s more",
			p.FilteredPlatforms, units.Bytes(p.SparseFallbackBytes)))
	}
	for _, im := range p.Images {
		state := "copy"
		if im.Present {
			state = "present"
		}
		if im.Error != "" {
			state = "ERROR " + im.Error
		}
		filtered := ""
		if im.FilteredPlatforms > 0 {
			filtered = fmt.Sprintf(", %d platform(s) filtered out: %s", im.FilteredPlatforms, units.Bytes(im.FilteredBytes))
		}
		lines = append(lines, fmt.Sprintf("%-8s %s -> %s %s (%s%s)", state, im.Source, im.Dest, im.Digest, units.Bytes(im.Size), filtered))
	}
	return lines
}

// Unresolved is the error of a plan some of whose images could not be resolved: the totals leave
// them out, so the plan is not the whole mirror. Nil when every image resolved.
func (p *PlanResult) Unresolved() error {
	failed := 0
	for _, im := range p.Images {
		if im.Error != "" {
			failed++
		}
	}
	if failed == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d images could not be resolved (ERROR in the plan); the totals leave them out", failed, len(p.Images))
}

// Plan plans the loaded images (see Plan): nothing is written.
func (l *Loaded) Plan(ctx context.Context, o Options) (*PlanResult, error) {
	return Plan(ctx, l.Resolved.Images, o)
}

// Notes are what loading found worth saying: the parts of a carried disk mirror checked and
// extracted, images left out by blockedImages, and the catalogs' warnings (Warning set).
func (l *Loaded) Notes() []Note {
	var notes []Note
	if un := l.Unpacked; un != nil {
		msg := fmt.Sprintf("archive %s: %d parts checked and extracted, %d extracted before", l.Job.FromDir, len(un.Extracted), len(un.Skipped))
		if len(un.Missing) > 0 {
			msg += "; not here (carried earlier?): " + strings.Join(un.Missing, " ")
		}
		notes = append(notes, Note{Text: msg})
	}
	for _, b := range l.Resolved.Blocked {
		notes = append(notes, Note{Text: "blocked by blockedImages: " + b})
	}
	for _, c := range l.Resolved.Catalogs {
		for _, w := range c.Warnings {
			notes = append(notes, Note{Warning: true, Text: "catalog " + c.Source + ": " + w})
		}
	}
	return notes
}

// Note is one line a run has to say; Warning marks one the user should act on.
type Note struct {
	Warning bool
	Text    string
}

// Lines is what the run did: images and bytes, the outputs and where, the update graph, the
// archive parts, then each image that failed.
func (r *Report) Lines() []string {
	cr := r.Copy
	skipped := 0
	for _, im := range cr.Images {
		if im.Skipped {
			skipped++
		}
	}
	lines := []string{fmt.Sprintf("mirrored %d images (%d already present, %d failed) in %s: %s pulled, %d blobs copied, %d mounted, %d present",
		len(cr.Images)-len(cr.Failed), skipped, len(cr.Failed), cr.Duration.Round(time.Millisecond), units.Bytes(cr.BytesPulled),
		cr.BlobsCopied, cr.BlobsMounted, cr.BlobsPresent)}
	outs := r.Outputs
	files := append([]string{outs.IDMS, outs.ITMS, outs.Content, outs.Mapping, r.UpdateService}, r.SignatureConfigMaps...)
	lines = append(lines, fmt.Sprintf("outputs in %s: %s", r.Dir, strings.Join(strings.Fields(strings.Join(append(files, outs.CatalogSources...), " ")), " ")))
	if g := r.Content.Graph; len(g) > 0 {
		lines = append(lines, fmt.Sprintf("update graph: %d files in %s (cincinnati/, graph-data/), listed in content.json: bootstrap upgrade plan --graph %s", len(g), r.Dir, r.Dir))
	}
	if r.Split {
		var names []string
		var size int64
		for _, p := range r.Parts {
			names = append(names, p.Name)
			size += p.Size
		}
		if len(r.Parts) == 0 {
			lines = append(lines, "archive: nothing new, no part written (archive.json lists the earlier ones)")
		} else {
			lines = append(lines, fmt.Sprintf("archive: %d new part(s), %s: %s; carry them with %s", len(r.Parts), units.Bytes(size), strings.Join(names, " "), ArchiveIndexFile))
		}
	}
	for _, f := range cr.Failed {
		lines = append(lines, fmt.Sprintf("FAILED %s: %s", f.Source, f.Error))
	}
	return lines
}

// VerifyDir proves that everything the content.json in dir lists is at o.Dest, and that the
// update graph files beside it are the ones it lists: `bootstrap mirror --verify` and the
// mirror stage's Verify.
func VerifyDir(ctx context.Context, dir string, o Options) (Content, *VerifyResult, error) {
	c, err := ReadContent(filepath.Join(dir, "content.json"))
	if err != nil {
		return c, nil, fmt.Errorf("the content.json of an earlier run: %w", err)
	}
	if err := VerifyGraph(dir, c.Graph); err != nil {
		return c, nil, fmt.Errorf("update graph: %w", err)
	}
	vr, err := Verify(ctx, c, o)
	return c, vr, err
}

// Lines is the verification as text: the counts, then each missing item.
func (v *VerifyResult) Lines(c Content) []string {
	lines := []string{fmt.Sprintf("verified %d images, %d manifests, %d blobs; %d missing", v.Images, v.Manifests, v.Blobs, len(v.Missing))}
	if len(c.Graph) > 0 {
		lines = append(lines, fmt.Sprintf("verified %d update graph files against content.json", len(c.Graph)))
	}
	for _, m := range v.Missing {
		lines = append(lines, fmt.Sprintf("MISSING %s (%s) %s %s", m.Source, m.Dest, m.What, m.Error))
	}
	return lines
}
