package bmc

import (
	"context"
	"strconv"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

// vendor is what differs from one BMC implementation to another, chosen once per connection
// after discovery (inspect reads the standard resources, then vendorFor picks by Manufacturer).
// Everything else — the step order, the read-backs, the journal, boot-once fallback to a
// persistent override, preflight's standard checks — is shared. Supporting another BMC family
// (HPE iLO, Supermicro) means one file implementing this interface, a case in vendorFor and a
// simulator profile in bmctest.
type vendor interface {
	// name names the implementation in results, findings and the report.
	name() string
	// controller is how remedies call the BMC ("the iDRAC", "the BMC").
	controller() string
	// readOEM adds state the standard resources do not carry (iDRAC ServerBoot.1 attributes).
	readOEM(ctx context.Context, c *Client, st *State) error
	// bootMethod is the way to arm the boot from the virtual CD on this BMC in this state:
	// MethodStandard, or an OEM method armOEM knows.
	bootMethod(st State) string
	// armOEM arms the boot through an OEM method (never called for the standard ones).
	armOEM(ctx context.Context, c *Client, st *State, method string) error
	// insertMedia puts url into slot (empty or ejected first by the caller); the caller reads
	// the slot back.
	insertMedia(ctx context.Context, c *Client, slot Media, url string) error
	// ejectMedia empties slot; the caller reads the slot back.
	ejectMedia(ctx context.Context, c *Client, slot Media) error
	// preflight adds the vendor's own findings (firmware floor, job queue, …), read-only.
	preflight(ctx context.Context, c *Client, st State) []finding.Finding
	// remedy is the vendor's wording for a failure, or "" for the vendor-neutral one.
	remedy(op string, err error) string
}

// vendorFor chooses the implementation for what a BMC reported.
func vendorFor(st State) vendor {
	if st.IsDell() {
		return dell{}
	}
	return generic{}
}

// generic is a standard Redfish service: media through the slot's own actions (or PATCH of
// Image/Inserted where it has none), the standard boot override, no OEM state.
type generic struct{}

func (generic) name() string                                                { return "generic Redfish" }
func (generic) controller() string                                          { return "the BMC" }
func (generic) readOEM(context.Context, *Client, *State) error              { return nil }
func (generic) bootMethod(State) string                                     { return MethodStandard }
func (generic) preflight(context.Context, *Client, State) []finding.Finding { return nil }
func (generic) remedy(string, error) string                                 { return "" }
func (generic) armOEM(context.Context, *Client, *State, string) error       { return errNoOEM }

func (generic) insertMedia(ctx context.Context, c *Client, slot Media, url string) error {
	return c.rawInsert(ctx, slot, url)
}

func (generic) ejectMedia(ctx context.Context, c *Client, slot Media) error {
	return c.rawEject(ctx, slot)
}

// controllerOf is how remedies name the BMC of st (vendor-neutral before discovery).
func controllerOf(st *State) string {
	if st == nil || st.vendor == nil {
		return "the BMC"
	}
	return st.vendor.controller()
}

// reword puts a vendor's wording into err's remedy when it has one for this failure.
func reword(st *State, err *Error) {
	if st == nil || st.vendor == nil {
		return
	}
	if r := st.vendor.remedy(err.Op, err.Err); r != "" {
		err.remedy = strings.ReplaceAll(r, "--node NAME", "--node "+err.Node)
	}
}

// vendorMismatch words a difference between bmc.vendor, a checked hint ("dell", "generic"; empty:
// none), and the implementation discovery chose; "" when they agree. Discovery always wins: the
// hint only catches a BMC address that points at another kind of BMC than the profile expects.
func vendorMismatch(hint string, st State) string {
	if hint == "" || st.vendor == nil {
		return ""
	}
	found := "generic"
	if _, ok := st.vendor.(dell); ok {
		found = "dell"
	}
	if strings.EqualFold(hint, found) {
		return ""
	}
	return "bmc.vendor says " + hint + " but the BMC reports Manufacturer " + strconv.Quote(st.Vendor) + " (" + st.Kind + "); the boot stage follows what the BMC reports"
}
