package bmctest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const (
	root    = "/redfish/v1"
	sessCol = root + "/SessionService/Sessions"
)

func (b *BMC) mediaCol() string {
	if b.systemLayout() {
		return b.sys + "/VirtualMedia"
	}
	return b.mgr + "/VirtualMedia"
}

func (b *BMC) serve(w http.ResponseWriter, r *http.Request) {
	if b.opts.Latency > 0 {
		time.Sleep(b.opts.Latency)
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	op := b.classify(r.Method, path)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		b.mu.Lock()
		b.stats.Writes++
		b.mu.Unlock()
	}
	if f := b.takeFault(op); f != nil {
		if f.Delay > 0 {
			time.Sleep(f.Delay)
		}
		if f.Status != 0 {
			writeError(w, f.Status, f.MessageID, f.Message)
			return
		}
	}
	if path == root || path == root+"/odata" {
		b.serviceRoot(w)
		return
	}
	if r.Method == http.MethodPost && path == sessCol && b.opts.Profile != ProfileGeneric {
		b.createSession(w, r)
		return
	}
	if !b.authorized(r) {
		writeError(w, http.StatusUnauthorized, "Base.1.12.NoValidSession", "There is no valid session established with the implementation.")
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance()
	switch {
	case r.Method == http.MethodDelete && strings.HasPrefix(path, sessCol+"/"):
		for tok, p := range b.sessions {
			if p == path {
				delete(b.sessions, tok)
			}
		}
		w.WriteHeader(http.StatusOK)
	case r.Method == http.MethodGet:
		b.get(w, path)
	case r.Method == http.MethodPatch && path == b.sys:
		b.patchBoot(w, r)
	case r.Method == http.MethodPost && path == b.sys+"/Actions/ComputerSystem.Reset":
		b.reset(w, r)
	case r.Method == http.MethodPost && !b.mediaActions() && strings.Contains(path, "/Actions/VirtualMedia."):
		// Redfish-Mockup-Server answers any POST with 204 and changes nothing.
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/Actions/VirtualMedia.InsertMedia"):
		b.insert(w, r, strings.TrimSuffix(path, "/Actions/VirtualMedia.InsertMedia"))
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/Actions/VirtualMedia.EjectMedia"):
		b.eject(w, strings.TrimSuffix(path, "/Actions/VirtualMedia.EjectMedia"))
	case r.Method == http.MethodPatch && b.slot(path) != nil:
		b.patchMedia(w, r, b.slot(path))
	case r.Method == http.MethodPost && b.idrac() && path == b.mgr+"/Actions/Oem/EID_674_Manager.ImportSystemConfiguration":
		b.importSCP(w, r)
	default:
		writeError(w, http.StatusNotFound, "Base.1.12.ResourceMissingAtURI", "The resource at the URI "+path+" was not found.")
	}
}

func (b *BMC) classify(method, path string) string {
	switch {
	case method == http.MethodPost && path == sessCol:
		return "session"
	case strings.HasSuffix(path, "InsertMedia"):
		return "insert"
	case strings.HasSuffix(path, "EjectMedia"):
		return "eject"
	case method == http.MethodPatch && path != b.sys:
		return "media-patch"
	case method == http.MethodPatch && path == b.sys:
		return "boot-override"
	case strings.HasSuffix(path, "ComputerSystem.Reset"):
		return "reset"
	case strings.HasSuffix(path, "ImportSystemConfiguration"):
		return "scp"
	case method == http.MethodGet:
		return "get"
	}
	return "other"
}

func (b *BMC) takeFault(op string) *Fault {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, f := range b.faults {
		if f.Op != op && f.Op != "any" {
			continue
		}
		if f.Times > 0 {
			f.Times--
			if f.Times == 0 {
				b.faults = append(b.faults[:i:i], b.faults[i+1:]...)
			}
		}
		return f
	}
	return nil
}

func (b *BMC) authorized(r *http.Request) bool {
	if u, p, ok := r.BasicAuth(); ok {
		return u == b.opts.Username && p == b.opts.Password
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.sessions[r.Header.Get("X-Auth-Token")]
	return ok
}

func (b *BMC) createSession(w http.ResponseWriter, r *http.Request) {
	var body struct{ UserName, Password string }
	if json.NewDecoder(r.Body).Decode(&body) != nil || body.UserName != b.opts.Username || body.Password != b.opts.Password {
		writeError(w, http.StatusUnauthorized, "Base.1.12.ResourceAtURIUnauthorized", "While accessing the resource at /redfish/v1/SessionService/Sessions, the service received an authorization error unauthorized.")
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.sessions) >= b.opts.SessionLimit {
		// iDRAC9 answers a full session table with RAC0218 (and HTTP 400 on 4.x–6.x).
		writeError(w, http.StatusBadRequest, "IDRAC.2.8.RAC0218", "The maximum number of user sessions is reached.")
		return
	}
	tok := make([]byte, 16)
	_, _ = rand.Read(tok)
	b.nextID++
	p := sessCol + "/" + strconv.Itoa(b.nextID)
	b.sessions[hex.EncodeToString(tok)] = p
	if len(b.sessions) > b.stats.MaxSessions {
		b.stats.MaxSessions = len(b.sessions)
	}
	w.Header().Set("X-Auth-Token", hex.EncodeToString(tok))
	w.Header().Set("Location", p)
	writeJSON(w, http.StatusCreated, map[string]any{"@odata.id": p, "Id": strconv.Itoa(b.nextID), "UserName": body.UserName})
}

func (b *BMC) serviceRoot(w http.ResponseWriter) {
	_, v := b.vendorInfo()
	r := map[string]any{
		"@odata.id": root, "@odata.type": "#ServiceRoot.v1_6_0.ServiceRoot", "Id": "RootService",
		"RedfishVersion": v,
		"Systems":        link(root + "/Systems"), "Managers": link(root + "/Managers"), "Chassis": link(root + "/Chassis"),
	}
	switch b.opts.Profile {
	case ProfileIDRAC9:
		r["Vendor"], r["Product"] = "Dell", "Integrated Dell Remote Access Controller"
	case ProfileGeneric:
		r["Name"] = "Redfish Service" // no SessionService: basic auth only
	case ProfilePatchOnly:
		r["Name"] = "Root Service"
	}
	if b.opts.Profile != ProfileGeneric {
		r["SessionService"] = link(root + "/SessionService")
		r["Links"] = map[string]any{"Sessions": link(sessCol)}
	}
	writeJSON(w, http.StatusOK, r)
}

func link(p string) map[string]string { return map[string]string{"@odata.id": p} }

func members(ps ...string) map[string]any {
	m := make([]map[string]string, len(ps))
	for i, p := range ps {
		m[i] = link(p)
	}
	return map[string]any{"Members": m, "Members@odata.count": len(m)}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json;odata.metadata=minimal;charset=utf-8")
	w.Header().Set("OData-Version", "4.0")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers in the Redfish error format iDRAC9 uses.
func writeError(w http.ResponseWriter, status int, id, msg string) {
	if id == "" {
		id = "Base.1.12.InternalError"
	}
	if msg == "" {
		msg = "The request failed due to an internal service error."
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{
		"code": "Base.1.12.GeneralError", "message": "A general error has occurred. See ExtendedInfo for more information",
		"@Message.ExtendedInfo": []map[string]any{{"MessageId": id, "Message": msg, "Severity": "Critical"}},
	}})
}

func itoa(i int) string { return strconv.Itoa(i) }

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
