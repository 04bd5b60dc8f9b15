package stages

import (
	"github.com/bootstrap-dev/bootstrap/internal/install"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// Stage names: stable lower-case words, CLI arguments (`bootstrap replay boot`) and journal keys.
// Write them through these constants, never as literals.
const (
	NamePreflight = "preflight"
	NameMirror    = "mirror"
	NameISO       = "iso"
	NameBoot      = "boot"
	NameInstall   = "install"
	NameConfigure = "configure"
	NameHandoff   = "handoff"
)

// The stages' journaled outputs, each under its stage's name with its Go type: later stages read
// them with Key.Read(env), the report and status with Key.Decode(raw). A reader never declares its
// own copy of an output type; the runner refuses an output of another type than its key's
// (AcceptsOutput below), so the writer cannot drift from its readers either.
const (
	PreflightOutputKey pipeline.OutputKey[PreflightOutput] = NamePreflight
	MirrorOutputKey    pipeline.OutputKey[MirrorOutput]    = NameMirror
	ISOOutputKey       pipeline.OutputKey[ISOOutput]       = NameISO
	BootOutputKey      pipeline.OutputKey[BootOutput]      = NameBoot
	InstallOutputKey   pipeline.OutputKey[install.Result]  = NameInstall
	ConfigureOutputKey pipeline.OutputKey[ConfigureOutput] = NameConfigure
	HandoffOutputKey   pipeline.OutputKey[HandoffOutput]   = NameHandoff
)

// AcceptsOutput implements pipeline.OutputTyped.
func (Preflight) AcceptsOutput(out any) bool { return PreflightOutputKey.Accepts(out) }

// AcceptsOutput implements pipeline.OutputTyped.
func (Mirror) AcceptsOutput(out any) bool { return MirrorOutputKey.Accepts(out) }

// AcceptsOutput implements pipeline.OutputTyped.
func (ISO) AcceptsOutput(out any) bool { return ISOOutputKey.Accepts(out) }

// AcceptsOutput implements pipeline.OutputTyped.
func (Boot) AcceptsOutput(out any) bool { return BootOutputKey.Accepts(out) }

// AcceptsOutput implements pipeline.OutputTyped.
func (Install) AcceptsOutput(out any) bool { return InstallOutputKey.Accepts(out) }

// AcceptsOutput implements pipeline.OutputTyped.
func (Configure) AcceptsOutput(out any) bool { return ConfigureOutputKey.Accepts(out) }

// AcceptsOutput implements pipeline.OutputTyped.
func (Handoff) AcceptsOutput(out any) bool { return HandoffOutputKey.Accepts(out) }
