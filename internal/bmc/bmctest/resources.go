package bmctest

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
)

// get serves the resource tree (caller holds b.mu).
func (b *BMC) get(w http.ResponseWriter, path string) {
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
		writeJSON(w, http.StatusOK, members(sysPath))
	case root + "/Managers":
		writeJSON(w, http.StatusOK, members(mgrPath))
	case root + "/Chassis":
		writeJSON(w, http.StatusOK, members(root+"/Chassis/System.Embedded.1"))
	case sysPath:
		writeJSON(w, http.StatusOK, b.systemJSON())
	case mgrPath:
		m := map[string]any{
			"@odata.id": mgrPath, "@odata.type": "#Manager.v1_14_0.Manager", "Id": "iDRAC.Embedded.1",
			"Name": "Manager", "ManagerType": "BMC", "Model": "14G Monolithic", "FirmwareVersion": b.opts.Firmware,
			"Links": map[string]any{"ManagerForServers": []map[string]string{link(sysPath)}},
			"Actions": map[string]any{"Oem": map[string]any{"#OemManager.ImportSystemConfiguration": map[string]string{
				"target": mgrPath + "/Actions/Oem/EID_674_Manager.ImportSystemConfiguration"}}},
		}
		if !b.systemLayout() {
			m["VirtualMedia"] = link(mgrPath + "/VirtualMedia")
		}
		writeJSON(w, http.StatusOK, m)
	case mgrPath + "/Jobs":
		ps := make([]string, 0, len(b.jobs))
		for p := range b.jobs {
			ps = append(ps, p)
		}
		sort.Strings(ps)
		writeJSON(w, http.StatusOK, members(ps...))
	case mgrPath + "/Attributes":
		a := map[string]any{}
		for k, v := range b.attrs {
			a[k] = v
		}
		writeJSON(w, http.StatusOK, map[string]any{"@odata.id": path, "Id": "iDRACAttributes", "Attributes": a})
	case sysPath + "/EthernetInterfaces":
		ps := make([]string, len(b.nics))
		for i := range b.nics {
			ps[i] = sysPath + "/EthernetInterfaces/" + nicID(i)
		}
		writeJSON(w, http.StatusOK, members(ps...))
	case b.mediaCol():
		ps := make([]string, len(b.media))
		for i, m := range b.media {
			ps[i] = b.mediaCol() + "/" + m.ID
		}
		writeJSON(w, http.StatusOK, members(ps...))
	default:
		if strings.HasPrefix(path, sysPath+"/EthernetInterfaces/") {
			for i, mac := range b.nics {
				if path == sysPath+"/EthernetInterfaces/"+nicID(i) {
					writeJSON(w, http.StatusOK, map[string]any{"@odata.id": path, "Id": nicID(i), "MACAddress": mac, "PermanentMACAddress": mac, "LinkStatus": "LinkUp"})
					return
				}
			}
		}
		if s := b.slot(path); s != nil {
			writeJSON(w, http.StatusOK, b.mediaJSON(s))
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
	s := map[string]any{
		"@odata.id": sysPath, "@odata.type": "#ComputerSystem.v1_17_0.ComputerSystem", "Id": "System.Embedded.1",
		"Name": "System", "Manufacturer": "Dell Inc.", "Model": b.opts.Model, "BiosVersion": "1.9.2",
		"SKU": "SIMTAG" + itoa(len(b.opts.MACs)), "PowerState": b.power, "SystemType": "Physical",
		"Boot": map[string]any{
			"BootSourceOverrideTarget":                         b.boot.Target,
			"BootSourceOverrideEnabled":                        b.boot.Enabled,
			"BootSourceOverrideMode":                           b.boot.Mode,
			"BootSourceOverrideTarget@Redfish.AllowableValues": []string{"None", "Pxe", "Floppy", "Cd", "Hdd", "BiosSetup", "Utilities", "UefiTarget", "SDCard", "UefiHttp"},
		},
		"EthernetInterfaces": link(sysPath + "/EthernetInterfaces"),
		"Links":              map[string]any{"ManagedBy": []map[string]string{link(mgrPath)}},
		"Actions": map[string]any{"#ComputerSystem.Reset": map[string]any{
			"target":                            sysPath + "/Actions/ComputerSystem.Reset",
			"ResetType@Redfish.AllowableValues": []string{"On", "ForceOff", "ForceRestart", "GracefulRestart", "GracefulShutdown", "PushPowerButton", "Nmi", "PowerCycle"},
		}},
	}
	if b.systemLayout() {
		s["VirtualMedia"] = link(sysPath + "/VirtualMedia")
	}
	return s
}

func (b *BMC) mediaJSON(s *slot) map[string]any {
	p := b.mediaCol() + "/" + s.ID
	conn := "NotConnected"
	var img any
	if s.Inserted {
		conn, img = "URI", s.Image
	}
	return map[string]any{
		"@odata.id": p, "@odata.type": "#VirtualMedia.v1_4_0.VirtualMedia", "Id": s.ID, "Name": s.Name,
		"MediaTypes": s.Types, "Inserted": s.Inserted, "Image": img, "ConnectedVia": conn, "WriteProtected": true,
		"Actions": map[string]any{
			"#VirtualMedia.InsertMedia": map[string]string{"target": p + "/Actions/VirtualMedia.InsertMedia"},
			"#VirtualMedia.EjectMedia":  map[string]string{"target": p + "/Actions/VirtualMedia.EjectMedia"},
		},
	}
}

// patchBoot applies a Boot override PATCH.
func (b *BMC) patchBoot(w http.ResponseWriter, r *http.Request) {
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
	if bt.BootSourceOverrideMode != "" {
		b.boot.Mode = bt.BootSourceOverrideMode
	}
	w.WriteHeader(http.StatusNoContent)
}
