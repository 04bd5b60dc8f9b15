package bmctest

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"time"
)

// get serves the resource tree (caller holds b.mu).
func (b *BMC) get(w http.ResponseWriter, path string) {
	if b.opts.Profile == ProfileGeneric && strings.HasPrefix(path, root+"/SessionService") {
		writeError(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", "The resource at the URI "+path+" was not found.")
		return
	}
	if !b.idrac() && (path == b.mgr+"/Jobs" || path == b.mgr+"/Attributes") {
		writeError(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", "The resource at the URI "+path+" was not found.")
		return
	}
	switch path {
	case root + "/SessionService":
		writeJSON(w, http.StatusOK, map[string]any{"@odata.id": path, "ServiceEnabled": true, "SessionTimeout": 1800, "Sessions": link(sessCol)})
	case sessCol:
		ps := []string{}
		for _, p := range b.sessions {
			ps = append(ps, p)
		}
		writeJSON(w, http.StatusOK, members(ps...))
	case root + "/Systems":
		writeJSON(w, http.StatusOK, members(b.sys))
	case root + "/Managers":
		writeJSON(w, http.StatusOK, members(b.mgr))
	case root + "/Chassis":
		writeJSON(w, http.StatusOK, members(root+"/Chassis/System.Embedded.1"))
	case b.sys:
		sys := b.systemJSON()
		w.Header().Set("ETag", etag(sys))
		writeJSON(w, http.StatusOK, sys)
	case b.mgr:
		m := map[string]any{
			"@odata.id": b.mgr, "@odata.type": "#Manager.v1_14_0.Manager", "Id": b.mgr[strings.LastIndex(b.mgr, "/")+1:],
			"Name": "Manager", "ManagerType": "BMC", "FirmwareVersion": b.opts.Firmware,
			"Links": map[string]any{"ManagerForServers": []map[string]string{link(b.sys)}},
		}
		if b.idrac() {
			m["Model"] = "14G Monolithic"
			m["Actions"] = map[string]any{"Oem": map[string]any{"#OemManager.ImportSystemConfiguration": map[string]string{
				"target": b.mgr + "/Actions/Oem/EID_674_Manager.ImportSystemConfiguration"}}}
		}
		if !b.systemLayout() {
			m["VirtualMedia"] = link(b.mgr + "/VirtualMedia")
		}
		writeJSON(w, http.StatusOK, m)
	case b.mgr + "/Jobs":
		ps := make([]string, 0, len(b.jobs))
		for p := range b.jobs {
			ps = append(ps, p)
		}
		sort.Strings(ps)
		writeJSON(w, http.StatusOK, members(ps...))
	case b.mgr + "/Attributes":
		a := map[string]any{}
		for k, v := range b.attrs {
			a[k] = v
		}
		writeJSON(w, http.StatusOK, map[string]any{"@odata.id": path, "Id": "iDRACAttributes", "Attributes": a})
	case b.sys + "/EthernetInterfaces":
		ps := make([]string, len(b.nics))
		for i := range b.nics {
			ps[i] = b.sys + "/EthernetInterfaces/" + nicID(i)
		}
		writeJSON(w, http.StatusOK, members(ps...))
	case b.mediaCol():
		ps := make([]string, len(b.media))
		for i, m := range b.media {
			ps[i] = b.mediaCol() + "/" + m.ID
		}
		writeJSON(w, http.StatusOK, members(ps...))
	default:
		if strings.HasPrefix(path, b.sys+"/EthernetInterfaces/") {
			for i, mac := range b.nics {
				if path == b.sys+"/EthernetInterfaces/"+nicID(i) {
					writeJSON(w, http.StatusOK, map[string]any{"@odata.id": path, "Id": nicID(i), "MACAddress": mac, "PermanentMACAddress": mac, "LinkStatus": "LinkUp"})
					return
				}
			}
		}
		if s := b.slot(path); s != nil {
			// Redfish services list the methods a resource takes in Allow; PATCH is how the
			// patch-only profile's slots take media.
			w.Header().Set("Allow", "GET")
			if !b.mediaActions() && !b.opts.NoMediaPatch {
				w.Header().Set("Allow", "GET, PATCH")
			}
			m := b.mediaJSON(s)
			w.Header().Set("ETag", etag(m))
			writeJSON(w, http.StatusOK, m)
			return
		}
		if s := b.slot(strings.TrimSuffix(path, "/InsertMediaActionInfo")); s != nil && b.opts.ActionInfo {
			b.actionInfo(w, path)
			return
		}
		if j, ok := b.jobs[path]; ok {
			writeJSON(w, http.StatusOK, map[string]any{"@odata.id": path, "Id": path[strings.LastIndex(path, "/")+1:], "JobState": j.state, "JobType": "ImportConfiguration", "Message": "Successfully imported and applied Server Configuration Profile."})
			return
		}
		writeError(w, http.StatusNotFound, "Base.1.12.ResourceMissingAtURI", "The resource at the URI "+path+" was not found.")
	}
}

func nicID(i int) string { return "NIC.Integrated.1-" + itoa(i+1) + "-1" }

func (b *BMC) slot(path string) *slot {
	for _, m := range b.media {
		if path == b.mediaCol()+"/"+m.ID {
			return m
		}
	}
	return nil
}

func (b *BMC) systemJSON() map[string]any {
	manufacturer, _ := b.vendorInfo()
	s := map[string]any{
		"@odata.id": b.sys, "@odata.type": "#ComputerSystem.v1_17_0.ComputerSystem", "Id": b.sys[strings.LastIndex(b.sys, "/")+1:],
		"Name": b.name, "Manufacturer": manufacturer, "Model": b.opts.Model, "BiosVersion": "1.9.2",
		"SKU": "SIMTAG" + itoa(len(b.opts.MACs)), "PowerState": b.power, "SystemType": "Physical",
		"Boot": map[string]any{
			"BootSourceOverrideTarget":                         b.boot.Target,
			"BootSourceOverrideEnabled":                        b.boot.Enabled,
			"BootSourceOverrideMode":                           b.boot.Mode,
			"BootSourceOverrideTarget@Redfish.AllowableValues": []string{"None", "Pxe", "Floppy", "Cd", "Hdd", "BiosSetup", "Utilities", "UefiTarget", "SDCard", "UefiHttp"},
		},
		"EthernetInterfaces": link(b.sys + "/EthernetInterfaces"),
		"Links":              map[string]any{"ManagedBy": []map[string]string{link(b.mgr)}},
		"Actions": map[string]any{"#ComputerSystem.Reset": map[string]any{
			"target":                            b.sys + "/Actions/ComputerSystem.Reset",
			"ResetType@Redfish.AllowableValues": []string{"On", "ForceOff", "ForceRestart", "GracefulRestart", "GracefulShutdown", "PushPowerButton", "Nmi", "PowerCycle"},
		}},
	}
	if a := b.enabledAllowed(); len(a) > 0 {
		s["Boot"].(map[string]any)["BootSourceOverrideEnabled@Redfish.AllowableValues"] = a
	}
	if b.systemLayout() {
		s["VirtualMedia"] = link(b.sys + "/VirtualMedia")
	}
	if b.idrac() {
		// iDRAC9 reports it (ComputerSystem v1_12); nanoseconds keep two quick resets apart.
		s["LastResetTime"] = b.lastReset.Format(time.RFC3339Nano)
	}
	return s
}

func (b *BMC) mediaJSON(s *slot) map[string]any {
	p := b.mediaCol() + "/" + s.ID
	conn := "NotConnected"
	var img any
	inserted := s.Inserted && !time.Now().Before(s.readyAt)
	if s.Inserted {
		conn, img = "URI", s.Image
	}
	m := map[string]any{
		"@odata.id": p, "@odata.type": "#VirtualMedia.v1_4_0.VirtualMedia", "Id": s.ID, "Name": s.Name,
		"MediaTypes": s.Types, "Inserted": inserted, "Image": img, "ConnectedVia": conn, "WriteProtected": true,
	}
	if b.mediaActions() {
		insert := map[string]string{"target": p + "/Actions/VirtualMedia.InsertMedia"}
		if b.opts.ActionInfo {
			insert["@Redfish.ActionInfo"] = p + "/InsertMediaActionInfo"
		}
		m["Actions"] = map[string]any{
			"#VirtualMedia.InsertMedia": insert,
			"#VirtualMedia.EjectMedia":  map[string]string{"target": p + "/Actions/VirtualMedia.EjectMedia"},
		}
	}
	return m
}

// patchMedia applies a PATCH of Image/Inserted to a slot: the only way on the patch-only
// profile; iDRAC9 and sushy-tools refuse it (their slots take media through actions).
func (b *BMC) patchMedia(w http.ResponseWriter, r *http.Request, s *slot) {
	if b.mediaActions() || b.opts.NoMediaPatch {
		writeError(w, http.StatusMethodNotAllowed, "Base.1.12.OperationNotAllowed", "The HTTP method is not allowed on this resource; use the InsertMedia and EjectMedia actions.")
		return
	}
	if !b.ifMatch(w, r, b.mediaJSON(s)) {
		return
	}
	var body struct {
		Image    *string
		Inserted *bool
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "Base.1.12.MalformedJSON", "The request body submitted was malformed JSON.")
		return
	}
	if body.Image != nil {
		s.Image = *body.Image
	}
	if body.Inserted != nil {
		s.Inserted = *body.Inserted
	}
	if s.Image == "" {
		s.Inserted = false
	}
	if !s.Inserted {
		s.Image = ""
	}
	w.WriteHeader(http.StatusNoContent)
}

// patchBoot applies a Boot override PATCH.
func (b *BMC) patchBoot(w http.ResponseWriter, r *http.Request) {
	if !b.ifMatch(w, r, b.systemJSON()) {
		return
	}
	var body struct {
		Boot struct {
			BootSourceOverrideTarget, BootSourceOverrideEnabled, BootSourceOverrideMode string
		}
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "Base.1.12.MalformedJSON", "The request body submitted was malformed JSON.")
		return
	}
	bt := body.Boot
	if bt.BootSourceOverrideTarget != "" {
		b.boot.Target = bt.BootSourceOverrideTarget
		b.boot.viaStandard = true
	}
	if bt.BootSourceOverrideEnabled != "" {
		b.boot.Enabled = bt.BootSourceOverrideEnabled
	}
	if b.opts.Profile == ProfileGeneric {
		b.boot.Enabled = "Continuous" // sushy-tools: whatever it was told
	}
	if bt.BootSourceOverrideMode != "" {
		b.boot.Mode = bt.BootSourceOverrideMode
	}
	w.WriteHeader(http.StatusNoContent)
}
