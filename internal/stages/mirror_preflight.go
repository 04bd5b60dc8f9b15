package stages

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
	"github.com/bootstrap-dev/bootstrap/internal/units"
)

// MirrorPreflightChecks are the registry checks the mirror stage contributes to preflight
// (Preflight.More): the site registry reachable, its TLS certificate trusted with the profile's
// CA (a failure shows the presented chain and what to fix), the credentials accepted, push
// permission proven with a scratch blob upload, and every source registry readable.
//
// The scratch upload is a write, so it is made only while the mirror stage has not yet succeeded
// in this work dir (its journal holds a successful mirror output): afterwards the mirrored content
// itself proved push permission, and a later pass (preflight runs on every pass) must not push
// anything when nothing changed.
func MirrorPreflightChecks(env *pipeline.Env) []preflight.Check {
	s := env.Site
	if s == nil || s.Registry.Host == "" {
		return nil
	}
	host := s.Registry.Host
	name := func(what string) string { return "registry " + host + " " + what }
	o, err := mirrorOptions(env)
	if err != nil {
		return []preflight.Check{preflight.Func(name("settings"), preflight.CategoryRegistry, func(context.Context) finding.Finding {
			return finding.Failf("Fix the registry and mirror sections of the site profile.", "%v", err)
		})}
	}
	push := !mirrorSucceeded(env)

	var once sync.Once
	var dest []mirror.RegistryCheck
	run := func(ctx context.Context) []mirror.RegistryCheck {
		once.Do(func() { dest = mirror.CheckDestination(ctx, o, o.Dest.Namespace, push) })
		return dest
	}
	step := func(st, what string) preflight.Check {
		return preflight.Func(name(what), preflight.CategoryRegistry, func(ctx context.Context) finding.Finding {
			for _, c := range run(ctx) {
				if c.Step == st {
					return registryResult(c)
				}
			}
			return finding.Failf("Run preflight again.", "step %s not run", st)
		})
	}
	checks := []preflight.Check{step(mirror.StepReach, "reachable"), step(mirror.StepTLS, "TLS trusted"),
		step(mirror.StepAuth, "credentials accepted")}
	if push {
		checks = append(checks, step(mirror.StepPush, "push allowed"))
	} else {
		checks = append(checks, preflight.Func(name("push allowed"), preflight.CategoryRegistry, func(context.Context) finding.Finding {
			return finding.Passf("proven by the mirror stage's content (no scratch upload once the mirror has succeeded)")
		}))
	}
	if d := s.Mirror.Source.ArchiveDir; d != "" {
		checks = append(checks, preflight.Func("mirror archive "+d+" readable", preflight.CategoryRegistry, func(context.Context) finding.Finding {
			return archiveResult(d)
		}))
	}
	if s.Mirror.ImageSetConfig != "" && s.Mirror.Source.ArchiveDir == "" {
		checks = append(checks, preflight.Func("mirror sources readable", preflight.CategoryRegistry, func(ctx context.Context) finding.Finding {
			return sourcesResult(ctx, env, o)
		}))
	}
	return checks
}

// registryResult turns one registry step into a preflight result.
func registryResult(c mirror.RegistryCheck) finding.Finding {
	switch {
	case c.NotChecked:
		return finding.Warnf("Fix the earlier registry check first.", "%s", c.Message)
	case c.Err != nil:
		var re *mirror.RegistryError
		if errors.As(c.Err, &re) {
			return finding.Failf(re.Remedy(), "%v", c.Err)
		}
		return finding.Failf("Check the registry.", "%v", c.Err)
	case c.Warning != "":
		return finding.Warnf(c.Warning, "%s", c.Message)
	}
	return finding.Passf("%s", c.Message)
}

// sourcesResult reads one image named by the ImageSetConfiguration on each source registry.
func sourcesResult(ctx context.Context, env *pipeline.Env, o mirror.Options) finding.Finding {
	isc, err := mirror.LoadISC(env.Site.Mirror.ImageSetConfig)
	if err != nil {
		return finding.Failf("Fix the ImageSetConfiguration (mirror.imageSetConfig).", "%v", err)
	}
	images := isc.NamedImages()
	if len(images) == 0 {
		return finding.Passf("the ImageSetConfiguration names no image to read")
	}
	var fails, warns, oks []string
	remedy := ""
	for _, c := range mirror.CheckSources(ctx, o, images) {
		switch {
		case c.Err != nil:
			fails = append(fails, c.Message)
			var re *mirror.RegistryError
			if remedy == "" && errors.As(c.Err, &re) {
				remedy = re.Remedy()
			}
		case c.Warning != "":
			warns = append(warns, c.Host+": "+c.Warning)
			oks = append(oks, c.Host)
		default:
			oks = append(oks, c.Host)
		}
	}
	switch {
	case len(fails) > 0:
		if remedy == "" {
			remedy = "Check mirror.source (registry, caFile, authFile) and the ImageSetConfiguration."
		}
		return finding.Failf(remedy, "%s", strings.Join(fails, "; "))
	case len(warns) > 0:
		return finding.Warnf("Give the source registry's CA (mirror.source.caFile) instead of insecure.", "%s", strings.Join(warns, "; "))
	}
	return finding.Passf("readable: %s", strings.Join(oks, ", "))
}

// archiveResult checks a disk mirror to load: archive.json and the sizes of its parts (their
// SHA-256 is checked by the mirror stage before extracting), or a layout's content.json.
func archiveResult(dir string) finding.Finding {
	const remedy = "Point mirror.source.archiveDir at the directory holding the disk mirror (archive.json and mirror_*.tar, or an OCI layout with content.json) written by `bootstrap mirror file://DIR`."
	idx, err := mirror.ReadArchiveIndex(dir)
	if err != nil {
		return finding.Failf(remedy, "%v", err)
	}
	if len(idx.Parts) == 0 {
		c, err := mirror.ReadContent(filepath.Join(dir, "content.json"))
		if err != nil {
			return finding.Failf(remedy, "%v", err)
		}
		return finding.Passf("OCI layout with %d images in content.json", len(c.Images))
	}
	var present, missing []string
	var size int64
	for _, p := range idx.Parts {
		fi, err := os.Stat(filepath.Join(dir, p.Name))
		switch {
		case err != nil:
			missing = append(missing, p.Name)
		case fi.Size() != p.Size:
			return finding.Failf("Copy "+p.Name+" again from the connected side.", "%s is %d bytes, archive.json says %d", p.Name, fi.Size(), p.Size)
		default:
			present = append(present, p.Name)
			size += p.Size
		}
	}
	if len(present) == 0 {
		return finding.Failf("Carry the mirror_*.tar parts with archive.json.", "none of the %d parts archive.json lists is in %s", len(idx.Parts), dir)
	}
	if len(missing) > 0 {
		return finding.Warnf("Fine when those parts were loaded by an earlier run; otherwise carry them too.",
			"%d of %d parts here (%s); not here: %s", len(present), len(idx.Parts), units.Bytes(size), strings.Join(missing, " "))
	}
	return finding.Passf("%d parts, %s", len(present), units.Bytes(size))
}

// mirrorSucceeded reports whether the mirror stage has a successful output.
func mirrorSucceeded(env *pipeline.Env) bool { return stageSucceeded(env, NameMirror) }

// stageSucceeded reports whether stage has a successful output.
func stageSucceeded(env *pipeline.Env, stage string) bool { return len(stageOutput(env, stage)) > 0 }

// stageOutput returns stage's last successful output: from env.Outputs (the preflight command
// hands every stage's), or else from the work dir's journal (inside a pipeline run a stage sees
// only the outputs of the stages before it, and preflight comes first); nil when there is none.
func stageOutput(env *pipeline.Env, stage string) json.RawMessage {
	if raw, ok := env.Outputs[stage]; ok {
		return raw
	}
	if env.WorkDir == "" {
		return nil
	}
	entries, _, err := pipeline.ReadJournal(pipeline.JournalPath(env.WorkDir))
	if err != nil {
		return nil
	}
	return pipeline.Fold(entries).Stage(stage).Output
}
