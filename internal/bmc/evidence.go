package bmc

import (
	"errors"
	"strings"
)

// The evidence rules are stated in the package doc (doc.go); judge applies them.

// ErrNoReset is a power action the BMC accepted while nothing it reports changed: no power
// transition, LastResetTime and BootProgress unchanged, a one-time override still armed.
var ErrNoReset = errors.New("the BMC accepted the reset but nothing shows it happened")

// observation is what the flow read around one power action.
type observation struct {
	From, PowerAfter              string // power before the action and after it
	Action                        string // On or ForceRestart
	ResetBefore, ResetAfter       string // LastResetTime ("" when not reported)
	ProgressBefore, ProgressAfter string // BootProgress.LastStateTime ("" when not reported)
	Once                          bool   // a one-time override was armed before the action
	Consumed                      bool   // and reads back no longer armed
	FetchLog                      bool   // a local fetch log is the witness (WithBootEvidence)
	ISORead                       bool   // and it shows the node's read after the action
}

// verdict is judge's answer: the evidence seen, or why the boot is unverified, or ErrNoReset.
type verdict struct {
	Evidence   []string
	Unverified string
	NoReset    bool
}

func judge(o observation) verdict {
	var v verdict
	if o.Action == "On" && o.From == "Off" && o.PowerAfter == "On" {
		v.Evidence = append(v.Evidence, "power Off→On") // R1
	}
	if o.ResetAfter != "" && o.ResetAfter != o.ResetBefore {
		v.Evidence = append(v.Evidence, "LastResetTime advanced to "+o.ResetAfter) // R2
	}
	if o.ProgressAfter != "" && o.ProgressAfter != o.ProgressBefore {
		v.Evidence = append(v.Evidence, "BootProgress advanced at "+o.ProgressAfter) // R3
	}
	if o.Once && o.Consumed {
		v.Evidence = append(v.Evidence, "one-time Cd override consumed") // R4
	}
	rebooted := len(v.Evidence) > 0
	if o.FetchLog {
		if o.ISORead {
			v.Evidence = append(v.Evidence, "the node read its ISO after the power action") // R5
		}
		return v
	}
	if rebooted {
		v.Unverified = "the ISO is served elsewhere (iso.baseURL): no fetch log shows the node read it; the reboot was seen (" + strings.Join(v.Evidence, ", ") + ")" // R6
		return v
	}
	if o.ResetAfter != "" || o.ProgressAfter != "" || (o.Once && !o.Consumed) {
		v.NoReset = true // R7, demonstrably
		return v
	}
	v.Unverified = "no sign of a reboot can be read: power was already On, the BMC reports neither LastResetTime nor BootProgress, and a persistent override is never consumed; with the ISO served elsewhere no fetch log shows a read" // R7
	return v
}

// noResetRemedy is what to do when a reset did nothing.
func noResetRemedy(st *State, node string) string {
	return "the BMC took the reset (HTTP 2xx) and did not restart the server: power-cycle it from " + controllerOf(st) +
		"'s web UI or its power button (a hung BMC may need its own reset first), then replay: bootstrap replay boot --node " + node
}
