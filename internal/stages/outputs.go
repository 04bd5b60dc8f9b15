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
// (OutputContract below) and stamps the key's version into the journal, which readers check, so the
// writer cannot drift from its readers either.
const (
	PreflightOutputKey pipeline.OutputKey[PreflightOutput] = NamePreflight
	MirrorOutputKey    pipeline.OutputKey[MirrorOutput]    = NameMirror
	ISOOutputKey       pipeline.OutputKey[ISOOutput]       = NameISO
	BootOutputKey      pipeline.OutputKey[BootOutput]      = NameBoot
	InstallOutputKey   pipeline.OutputKey[install.Result]  = NameInstall
	ConfigureOutputKey pipeline.OutputKey[ConfigureOutput] = NameConfigure
	HandoffOutputKey   pipeline.OutputKey[HandoffOutput]   = NameHandoff
)

// OutputContract implements pipeline.OutputTyped.
func (Preflight) OutputContract() pipeline.OutputContract { return PreflightOutputKey }

// OutputContract implements pipeline.OutputTyped.
func (Mirror) OutputContract() pipeline.OutputContract { return MirrorOutputKey }

// OutputContract implements pipeline.OutputTyped.
func (ISO) OutputContract() pipeline.OutputContract { return ISOOutputKey }

// OutputContract implements pipeline.OutputTyped.
func (Boot) OutputContract() pipeline.OutputContract { return BootOutputKey }

// OutputContract implements pipeline.OutputTyped.
func (Install) OutputContract() pipeline.OutputContract { return InstallOutputKey }

// OutputContract implements pipeline.OutputTyped.
func (Configure) OutputContract() pipeline.OutputContract { return ConfigureOutputKey }

// OutputContract implements pipeline.OutputTyped.
func (Handoff) OutputContract() pipeline.OutputContract { return HandoffOutputKey }
