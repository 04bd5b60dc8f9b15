package bmc

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors callers branch on with errors.Is.
var (
	// ErrUnreachable means no TCP/HTTP connection to the BMC could be made.
	ErrUnreachable = errors.New("BMC unreachable")
	// ErrTLS means the BMC's certificate is not trusted with the configured CA.
	ErrTLS = errors.New("BMC certificate not trusted")
	// ErrAuth means the BMC refused the credentials.
	ErrAuth = errors.New("BMC refused the credentials")
	// ErrSessionLimit means the BMC has no free Redfish session (iDRAC RAC0218).
	ErrSessionLimit = errors.New("BMC session limit reached")
)

// Dell iDRAC and DMTF Base message IDs we branch on. Message IDs arrive prefixed with a registry
// and version ("IDRAC.2.8.VRM0021", "Base.1.12.SessionLimitExceeded"); match the suffix.
const (
	// MsgMediaInUse: "Virtual Media is detached or already in use" (iDRAC9 3.x–7.x). Eject, retry.
	MsgMediaInUse = "VRM0021"
	// MsgInternal: "The requested operation cannot be completed because of an internal error"
	// (iDRAC9 3.30+, often a busy Lifecycle Controller or job queue). Retry after a pause.
	MsgInternal = "SYS446"
	// MsgSessionLimit: "The maximum number of user sessions is reached" (iDRAC9, 8 sessions).
	MsgSessionLimit = "RAC0218"
	// MsgSessionLimitBase is the DMTF Base registry equivalent of RAC0218.
	MsgSessionLimitBase = "SessionLimitExceeded"
	// MsgMediaUnreachable: "The remote file location is not accessible or reachable" (iDRAC9).
	MsgMediaUnreachable = "RAC0904"
)

// RedfishError is a non-2xx Redfish response: its HTTP status and the message IDs of its
// @Message.ExtendedInfo (or its code).
type RedfishError struct {
	Method     string
	Path       string
	Status     int
	MessageIDs []string
	Message    string
}

func (e *RedfishError) Error() string {
	s := fmt.Sprintf("%s %s: HTTP %d", e.Method, e.Path, e.Status)
	if len(e.MessageIDs) > 0 {
		s += " [" + strings.Join(e.MessageIDs, ", ") + "]"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Has reports whether one of the response's message IDs ends with id.
func (e *RedfishError) Has(id string) bool {
	for _, m := range e.MessageIDs {
		if m == id || strings.HasSuffix(m, "."+id) {
			return true
		}
	}
	return false
}

// Temporary reports whether retrying later may succeed: 5xx responses other than 501, iDRAC's
// SYS446 and a full session table.
func (e *RedfishError) Temporary() bool {
	if e.Has(MsgInternal) || e.Has(MsgSessionLimit) || e.Has(MsgSessionLimitBase) {
		return true
	}
	return e.Status >= 500 && e.Status != 501
}

// Error is a failed BMC operation on one node. Callers branch on it with errors.As.
type Error struct {
	Node   string // node name from the site profile
	Op     string // step: connect, inspect, eject, insert, boot-override, power, confirm
	Err    error
	remedy string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("node %s: %s: %v", e.Node, e.Op, e.Err)
	if e.remedy != "" {
		s += " (remedy: " + e.remedy + ")"
	}
	return s
}

// Remedy is what the field engineer should do (the project's remedy contract: the runner journals
// it and `bootstrap status` shows it).
func (e *Error) Remedy() string { return e.remedy }

func (e *Error) Unwrap() error { return e.Err }

// Temporary reports whether the underlying failure is transient.
func (e *Error) Temporary() bool { return temporary(e.Err) }

func asRedfish(err error, re **RedfishError) bool { return errors.As(err, re) }

func temporary(err error) bool {
	var re *RedfishError
	if errors.As(err, &re) {
		return re.Temporary()
	}
	var t interface{ Temporary() bool }
	if errors.As(err, &t) {
		return t.Temporary()
	}
	return errors.Is(err, ErrSessionLimit)
}

// newError builds a node's *Error with the remedy for it, naming the node in replay hints.
func newError(node, op string, err error) *Error {
	return &Error{Node: node, Op: op, Err: err, remedy: strings.ReplaceAll(remedyFor(op, err), "--node NAME", "--node "+node)}
}

// remedyFor proposes a vendor-neutral remedy for an error on the given step; once the BMC is
// known, its vendor may reword it (see vendor.remedy).
func remedyFor(op string, err error) string {
	var re *RedfishError
	switch {
	case errors.Is(err, ErrAuth):
		return "check bmc.username and the password secret for this node; log in to the BMC's web UI with them to confirm"
	case errors.Is(err, ErrTLS):
		return "set bmc.caFile to the CA that signed the BMC's certificate (or, on an isolated lab only, bmc.insecure: true)"
	case errors.Is(err, ErrUnreachable):
		return "check bmc.address and that the jump host can reach the BMC on HTTPS (cabling, VLAN, firewall)"
	case errors.Is(err, ErrSessionLimit):
		return "close idle Redfish sessions on the BMC (its web UI's session list) and retry"
	case errors.As(err, &re) && re.Has(MsgMediaUnreachable):
		return "the BMC cannot fetch the ISO: check iso.baseURL is reachable from the BMC network and the ISO is being served"
	case errors.As(err, &re) && re.Has(MsgMediaInUse):
		return "disconnect the virtual media held by another session (virtual console) and replay: bootstrap replay boot --node NAME"
	case errors.As(err, &re) && re.Has(MsgInternal):
		return "the BMC is busy: wait a few minutes, then replay the node: bootstrap replay boot --node NAME"
	case errors.Is(err, ErrNoISORead):
		return "watch the node's console: check UEFI boot mode and that the virtual CD/DVD is a boot option, then replay: bootstrap replay boot --node NAME"
	}
	switch op {
	case StepPower, StepConfirm:
		return "check the server in the BMC's virtual console, then replay: bootstrap replay boot --node NAME"
	}
	return "check the BMC (web UI, event log) and replay: bootstrap replay boot --node NAME"
}
