package stages

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso"
	"github.com/bootstrap-dev/bootstrap/internal/finding"
	mirrorpkg "github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// ISO is the iso stage: validate what the installer would reject, render install-config.yaml,
// agent-config.yaml and the day-1 manifests into the work dir, build the agent ISO with
// openshift-install and prepare the per-node ISO views the boot stage serves.
type ISO struct {
	// ManifestsOnly stops after writing the configs and openshift/ (review, change control, CI).
	ManifestsOnly bool
}

// ISOOutput is the iso stage's journaled output; the boot stage reads URL and Nodes.
type ISOOutput struct {
	// Files are the SHA-256 of every rendered file, by path relative to the work dir.
	Files         agentiso.Digests `json:"files"`
	ManifestsOnly bool             `json:"manifestsOnly,omitempty"`
	// Build is the agent ISO and how it was made (absent with ManifestsOnly).
	Build *agentiso.BuildResult `json:"build,omitempty"`
	// URL is where the shared agent ISO is served.
	URL string `json:"url,omitempty"`
	// Nodes is, for every node, the ISO it boots.
	Nodes map[string]NodeISO `json:"nodes,omitempty"`
	// Warnings are the validation warnings (also sent as events).
	Warnings []string `json:"warnings,omitempty"`
}

// NodeISO is the ISO one node boots: its own view (per-node customizations) or the shared one.
type NodeISO struct {
	URL            string   `json:"url"`
	ETag           string   `json:"etag"`
	KernelArgs     []string `json:"kernelArgs,omitempty"`
	IgnitionSHA256 string   `json:"ignitionSHA256,omitempty"`
	// PatchBytes is what the view costs (memory, no disk) over the shared ISO.
	PatchBytes int64 `json:"patchBytes,omitempty"`
}

// Name implements pipeline.Stage.
func (ISO) Name() string { return NameISO }

// Summary implements pipeline.Stage.
func (ISO) Summary() string { return summary(NameISO) }

type isoInputs struct {
	Files          agentiso.Digests             `json:"files"`
	Installer      string                       `json:"installer,omitempty"`
	Release        string                       `json:"release"`
	ReleaseImage   string                       `json:"releaseImage,omitempty"`
	Customizations map[string]customizationHash `json:"customizations,omitempty"`
	BaseURL        string                       `json:"baseURL"`
	ManifestsOnly  bool                         `json:"manifestsOnly,omitempty"`
}

type customizationHash struct {
	KernelArgs []string `json:"kernelArgs,omitempty"`
	Ignition   string   `json:"ignition,omitempty"`
}

// Inputs implements pipeline.Stage: the digests of everything rendered (so any change of
// profile, certificate, auth entry or mirror output changes it), the installer and the per-node
// customizations. The pull secret is only present as part of a file digest.
func (s ISO) Inputs(env *pipeline.Env) (any, error) {
	r, mirror, err := render(env)
	if err != nil {
		return nil, err
	}
	custom, err := agentiso.NodeCustomizations(env.Site)
	if err != nil {
		return nil, err
	}
	in := isoInputs{Files: r.Digests(), Installer: env.Site.Cluster.Installer.Path, Release: env.Site.Cluster.Release.Version,
		ReleaseImage: releaseImage(env, mirror), BaseURL: agentiso.BaseURL(env.Site), ManifestsOnly: s.ManifestsOnly,
		Customizations: map[string]customizationHash{}}
	for n, c := range custom {
		h := customizationHash{KernelArgs: c.KernelArgs}
		if len(c.Ignition) > 0 {
			h.Ignition = sha(c.Ignition)
		}
		in.Customizations[n] = h
	}
	return in, nil
}

// Run implements pipeline.Stage.
func (s ISO) Run(ctx context.Context, env *pipeline.Env) (any, error) {
	st := env.Site
	out := &ISOOutput{ManifestsOnly: s.ManifestsOnly}
	problems := agentiso.Validate(st)
	for _, p := range problems {
		if p.Status == finding.Warn {
			out.Warnings = append(out.Warnings, p.String())
			emit(env, pipeline.Event{Kind: pipeline.Warning, Node: p.Node, Message: p.String()})
		}
	}
	if err := agentiso.Invalid(problems); err != nil {
		return nil, err
	}
	r, mirror, err := render(env)
	if err != nil {
		return nil, err
	}
	changed, err := r.Write(env.WorkDir)
	if err != nil {
		return nil, err
	}
	out.Files = r.Digests()
	emit(env, pipeline.Event{Kind: pipeline.Info, Step: "render",
		Message: fmt.Sprintf("wrote %d files (%d changed) to %s", len(r.Files), len(changed), env.WorkDir)})
	if s.ManifestsOnly {
		return out, nil
	}

	build, err := s.build(ctx, env, r, mirror)
	if err != nil {
		return nil, err
	}
	out.Build = build
	if err := s.prepareNodes(env, out); err != nil {
		return nil, err
	}
	return out, nil
}

func (s ISO) build(ctx context.Context, env *pipeline.Env, r *agentiso.Rendered, mirror *agentiso.MirrorOutputs) (*agentiso.BuildResult, error) {
	var prev agentiso.BuildResult
	if env.Steps != nil && env.Steps.Done("build", &prev) {
		if sum, err := fileSHA256(prev.ISO); err == nil && sum == prev.SHA256 {
			emit(env, pipeline.Event{Kind: pipeline.Info, Step: "build", Message: "agent ISO already built: " + prev.ISO})
			return &prev, nil
		}
	}
	rel := releaseImage(env, mirror)
	info, err := s.installer(ctx, env, mirror, rel)
	if err != nil {
		return nil, err
	}
	if rel == "" {
		emit(env, pipeline.Event{Kind: pipeline.Warning, Step: "build", Message: "no mirrored release image by digest " +
			"(mirror stage output or cluster.release.image by digest): openshift-install uses its built-in release, " +
			"resolved through imageDigestSources"})
	}
	start := time.Now()
	res, err := agentiso.Build(ctx, agentiso.BuildOptions{WorkDir: env.WorkDir, Rendered: r, Installer: info.Path, Info: info,
		ReleaseVersion: env.Site.Cluster.Release.Version, ReleaseImage: rel,
		Log: func(line string) { emit(env, pipeline.Event{Kind: pipeline.Info, Step: "build", Message: line}) }})
	if err != nil {
		return nil, err
	}
	emit(env, pipeline.Event{Kind: pipeline.StepDone, Step: "build",
		Message: fmt.Sprintf("agent ISO %s (%d bytes, sha256 %s) in %s", res.ISO, res.Size, res.SHA256, time.Since(start).Round(time.Second))})
	if env.Steps != nil {
		if err := env.Steps.Record("build", res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// installerCacheDir is where, under the work dir, extracted openshift-install binaries are kept.
const installerCacheDir = "cache/openshift-install"

// installer finds openshift-install: the profile's path, else PATH, else extracted from the
// mirrored release payload (cached in the work dir by image digest).
func (s ISO) installer(ctx context.Context, env *pipeline.Env, mirror *agentiso.MirrorOutputs, rel string) (*agentiso.InstallerInfo, error) {
	st := env.Site
	var prev agentiso.InstallerInfo
	if env.Steps != nil && env.Steps.Done("installer", &prev) && prev.Path != "" {
		// chosen earlier in this attempt (a run killed before the build): the same binary, if unchanged
		if sum, err := fileSHA256(prev.Path); err == nil && sum == prev.SHA256 {
			emit(env, pipeline.Event{Kind: pipeline.Info, Step: "installer", Message: fmt.Sprintf("openshift-install %s (from %s, sha256 %s), as chosen before",
				prev.Path, prev.Source, prev.SHA256)})
			return &prev, nil
		}
	}
	info, err := agentiso.LookupInstaller(st.Cluster.Installer.Path)
	if err != nil {
		return nil, err
	}
	if info == nil {
		if rel == "" {
			_, err := agentiso.FindInstaller("")
			return nil, err
		}
		o := mirrorpkg.DefaultOptions(mirrorpkg.Dest{})
		o.Source = mirrorpkg.Endpoint{Host: st.Registry.Host, Insecure: st.Registry.Insecure, CAFile: st.Registry.CAFile, AuthFile: st.Registry.AuthFile}
		emit(env, pipeline.Event{Kind: pipeline.Info, Step: "installer", Message: "extract openshift-install from the mirrored release " + rel})
		start := time.Now()
		info, err = agentiso.ExtractInstaller(ctx, agentiso.ExtractOptions{ReleaseImage: rel, ReleaseArch: st.Cluster.Release.Architecture,
			Sources: mirror.DigestSources, Registry: o, CacheDir: filepath.Join(env.WorkDir, filepath.FromSlash(installerCacheDir))})
		if err != nil {
			return nil, err
		}
		if !info.Cached && len(info.Stamped) < 2 {
			emit(env, pipeline.Event{Kind: pipeline.Warning, Step: "installer", Message: fmt.Sprintf("openshift-install from %s carries "+
				"%d of the release placeholders oc stamps (release image, version); the version and release checks decide whether it fits", info.Image, len(info.Stamped))})
		}
		how := fmt.Sprintf("read %d bytes in %d layer(s) of %s in %s", info.BytesRead, info.LayersRead, info.Image, time.Since(start).Round(time.Millisecond))
		if info.Cached {
			how = "cached, nothing read from the registry"
		}
		emit(env, pipeline.Event{Kind: pipeline.Info, Step: "installer", Message: fmt.Sprintf("openshift-install %s (%s component, %d bytes, sha256 %s): %s",
			info.Path, info.Component, info.Size, info.SHA256, how)})
	} else {
		emit(env, pipeline.Event{Kind: pipeline.Info, Step: "installer", Message: fmt.Sprintf("openshift-install %s (from %s, sha256 %s)", info.Path, info.Source, info.SHA256)})
	}
	if env.Steps != nil {
		if err := env.Steps.Record("installer", info); err != nil {
			return nil, err
		}
	}
	return info, nil
}

func (s ISO) prepareNodes(env *pipeline.Env, out *ISOOutput) error {
	custom, err := agentiso.NodeCustomizations(env.Site)
	if err != nil {
		return err
	}
	p, err := agentiso.Prepare(agentiso.PrepareOptions{BaseISO: out.Build.ISO, BaseDigest: out.Build.SHA256, Nodes: custom,
		Progress: func(node string, done, total int) {
			emit(env, pipeline.Event{Kind: pipeline.Progress, Step: "per-node", Node: node, Current: int64(done), Total: int64(total), Unit: "nodes"})
		}})
	if err != nil {
		return err
	}
	defer p.Close()
	base := agentiso.BaseURL(env.Site)
	if out.URL, err = agentiso.URL(base, p.Base); err != nil {
		return err
	}
	out.Nodes = map[string]NodeISO{}
	for _, n := range env.Site.Nodes {
		img := p.ImageFor(n.Name)
		u, err := agentiso.URL(base, img)
		if err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
		ni := NodeISO{URL: u, ETag: img.ETag, PatchBytes: img.PatchBytes}
		if c, ok := custom[n.Name]; ok {
			ni.KernelArgs = c.KernelArgs
			if len(c.Ignition) > 0 {
				ni.IgnitionSHA256 = sha(c.Ignition)
			}
		}
		out.Nodes[n.Name] = ni
	}
	return nil
}

// Verify implements pipeline.Verifier: the rendered files and the ISO on disk are still the ones
// the last run recorded.
func (s ISO) Verify(_ context.Context, env *pipeline.Env) error {
	prev, ok, err := ISOOutputKey.Read(env)
	if err != nil || !ok {
		return fmt.Errorf("iso: no previous output to verify")
	}
	paths := make([]string, 0, len(prev.Files))
	for p := range prev.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		sum, err := fileSHA256(filepath.Join(env.WorkDir, filepath.FromSlash(p)))
		if err != nil || sum != prev.Files[p] {
			return fmt.Errorf("iso: %s changed or missing since the last run", p)
		}
	}
	if prev.Build != nil {
		sum, err := fileSHA256(prev.Build.ISO)
		if err != nil || sum != prev.Build.SHA256 {
			return fmt.Errorf("iso: agent ISO %s changed or missing since the last run", prev.Build.ISO)
		}
	}
	return nil
}

// Plan implements pipeline.Planner.
func (s ISO) Plan(_ context.Context, env *pipeline.Env) ([]string, error) {
	r, mirror, err := render(env)
	if err != nil {
		return nil, err
	}
	lines := []string{}
	for _, f := range r.Files {
		lines = append(lines, "write "+filepath.Join(env.WorkDir, filepath.FromSlash(f.Path)))
	}
	if s.ManifestsOnly {
		return lines, nil
	}
	rel := releaseImage(env, mirror)
	if _, err := exec.LookPath("openshift-install"); err != nil && env.Site.Cluster.Installer.Path == "" && rel != "" {
		lines = append(lines, fmt.Sprintf("extract openshift-install from the mirrored release %s (installer component; cached in %s)",
			rel, filepath.Join(env.WorkDir, filepath.FromSlash(installerCacheDir))))
	}
	if rel == "" {
		rel = "(the installer's built-in release)"
	}
	lines = append(lines, fmt.Sprintf("run openshift-install agent create image in %s with release %s",
		filepath.Join(env.WorkDir, agentiso.InstallerDir), rel))
	custom, err := agentiso.NodeCustomizations(env.Site)
	if err != nil {
		return nil, err
	}
	if len(custom) > 0 {
		lines = append(lines, fmt.Sprintf("prepare per-node ISO views for %d nodes (no copies)", len(custom)))
	}
	return lines, nil
}

func render(env *pipeline.Env) (*agentiso.Rendered, *agentiso.MirrorOutputs, error) {
	if env.Site == nil {
		return nil, nil, errors.New("iso: no site profile")
	}
	mirror, err := agentiso.LoadMirrorOutputs(env.WorkDir)
	if err != nil {
		return nil, nil, err
	}
	r, err := agentiso.Render(agentiso.RenderOptions{Site: env.Site, Mirror: mirror})
	if err != nil {
		return nil, nil, err
	}
	return r, mirror, nil
}

// releaseImage is the mirror stage's release image, else cluster.release.image mapped through
// the IDMS when it is by digest.
func releaseImage(env *pipeline.Env, mirror *agentiso.MirrorOutputs) string {
	if mo, ok, err := MirrorOutputKey.Read(env); ok && err == nil && mo.ReleaseImage != "" {
		return mo.ReleaseImage
	}
	return agentiso.MirrorReleaseImage(env.Site.Cluster.Release.Image, mirror.DigestSources)
}

func emit(env *pipeline.Env, e pipeline.Event) {
	if env.Events == nil {
		return
	}
	e.Time = time.Now()
	e.Stage = NameISO
	env.Events(e)
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
