package bmctest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"time"
)

// Vendor behaviours, each drawn from how BMCs are documented to differ (the references are in
// doc.go); Behaviours names a ready Options for each, so a test can run every one.

// MediaSlot replaces a profile's virtual-media slots (Options.Media).
type MediaSlot struct {
	ID    string
	Types []string // MediaTypes, e.g. {"CD", "USBStick"} for Supermicro's UsbCd
	Image string   // inserted by another party, when set
	// Taken makes the slot refuse InsertMedia as a slot held by another session does (iDRAC9's
	// VRM0021 "Virtual Media is detached or already in use", HTTP 500 on every try).
	Taken bool
}

// Behaviours are the vendor behaviours the boot flow must handle, by name: each an Options the
// simulator starts with (MACs, Power and Cert are the caller's to add).
func Behaviours() map[string]Options {
	return map[string]Options{
		// Supermicro X11/X12: one slot, UsbCd, taking CD and USB-stick images (sushy's
		// Supermicro notes; the vendor's Redfish reference guide).
		"usbcd-only": {Profile: ProfileGeneric, Manufacturer: "Supermicro",
			Media: []MediaSlot{{ID: "UsbCd", Types: []string{"CD", "USBStick"}}}},
		// BMCs that refuse InsertMedia without TransferProtocolType (sushy's
		// is_transfer_protocol_required); this one publishes @Redfish.ActionInfo saying so.
		"transfer-protocol-required": {Profile: ProfileGeneric, RequireTransferProtocol: true, ActionInfo: true},
		// AMI MegaRAC (and NVIDIA DGX): InsertMedia refused without UserName/Password, even empty
		// (sushy's is_credentials_required); no ActionInfo: learned from the refusal.
		"credentials-required": {Profile: ProfileGeneric, RequireCredentials: true},
		// HPE iLO 5/6 and Lenovo XCC: PATCH without If-Match answered 428, a stale one 412
		// (DMTF DSP0266 "ETags"; sushy sends If-Match on its PATCHes).
		"if-match-required": {Profile: ProfilePatchOnly, RequireIfMatch: true},
		// BMCs that mount the image in the background: Inserted stays false for a while after
		// a 204 (HPE iLO, Lenovo XCC, as Ironic's virtual-media notes warn).
		"async-insert": {Profile: ProfileGeneric, AsyncInsert: 300 * time.Millisecond},
		// A first CD slot held by another session while a second is free.
		"first-slot-taken": {Profile: ProfileGeneric, Media: []MediaSlot{
			{ID: "CD1", Types: []string{"CD", "DVD"}, Taken: true}, {ID: "CD2", Types: []string{"CD", "DVD"}}}},
		// A reset answered 204 that does nothing (see Options.NoopReset).
		"noop-reset": {NoopReset: true},
		// A server that ignores the one-time override and starts from its disk (Options.IgnoreBootOnce).
		"ignored-once-override": {IgnoreBootOnce: true},
	}
}

// etag is a resource's ETag: a hash of its JSON, so it changes whenever the resource does.
func etag(v any) string {
	b, _ := json.Marshal(v)
	h := fnv.New64a()
	_, _ = h.Write(b)
	return fmt.Sprintf(`W/"%x"`, h.Sum64())
}

// ifMatch enforces If-Match on a PATCH when the behaviour asks for it (caller holds b.mu): 428
// without the header, 412 when it names another version. It reports whether to go on.
func (b *BMC) ifMatch(w http.ResponseWriter, r *http.Request, current any) bool {
	if !b.opts.RequireIfMatch {
		return true
	}
	got := r.Header.Get("If-Match")
	switch {
	case got == "":
		writeError(w, http.StatusPreconditionRequired, "Base.1.12.PreconditionRequired", "A precondition header or annotation is required to change this resource.")
		return false
	case got != "*" && got != etag(current):
		writeError(w, http.StatusPreconditionFailed, "Base.1.12.PreconditionFailed", "The ETag supplied did not match the ETag required to change this resource.")
		return false
	}
	return true
}

// insertRefusal is why InsertMedia is refused for its body, or "" (caller holds b.mu).
func (b *BMC) insertRefusal(protocol string, user, pass *string) string {
	switch {
	case b.opts.RequireTransferProtocol && protocol == "":
		return "TransferProtocolType"
	case b.opts.RequireCredentials && user == nil:
		return "UserName"
	case b.opts.RequireCredentials && pass == nil:
		return "Password"
	}
	return ""
}

// actionInfo serves the InsertMedia ActionInfo of a slot (published with Options.ActionInfo).
func (b *BMC) actionInfo(w http.ResponseWriter, path string) {
	params := []map[string]any{{"Name": "Image", "Required": true, "DataType": "String"}}
	if b.opts.RequireTransferProtocol {
		params = append(params, map[string]any{"Name": "TransferProtocolType", "Required": true, "DataType": "String",
			"AllowableValues": []string{"HTTP", "HTTPS"}})
	}
	if b.opts.RequireCredentials {
		params = append(params, map[string]any{"Name": "UserName", "Required": true, "DataType": "String"},
			map[string]any{"Name": "Password", "Required": true, "DataType": "String"})
	}
	writeJSON(w, http.StatusOK, map[string]any{"@odata.id": path, "@odata.type": "#ActionInfo.v1_1_2.ActionInfo",
		"Id": "InsertMediaActionInfo", "Name": "Insert Media Action Info", "Parameters": params})
}
