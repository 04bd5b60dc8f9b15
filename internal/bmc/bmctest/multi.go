package bmctest

import (
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
)

// ProfileMultiSystem names the multi-system service NewMulti starts: one Redfish service that
// manages several systems, shaped like sushy-tools driving several libvirt domains (the Metal3
// development environment): Systems/<uuid> and Managers/<uuid> per domain, each System's
// Links.ManagedBy naming its own Manager, virtual media under that Manager, no SessionService.
// A node on such a service is addressed as https://host/redfish/v1/Systems/<id> (the
// Metal3/Ironic redfish-virtualmedia:// scheme). Every member behaves as ProfileGeneric.
const ProfileMultiSystem Profile = "multi-system"

// Member is one system of a multi-system service.
type Member struct {
	ID    string   // the System's (and its Manager's) Id; sushy-tools uses the domain's UUID
	Name  string   // the System's Name (the libvirt domain's name)
	MACs  []string // its NICs
	Power string   // initial power: Off (default) or On
}

// Request is one request a member system received.
type Request struct {
	Method, Path string
}

// Multi is a simulated Redfish service managing several systems on one listener. It records
// every request per system, so a test can prove a node's actions never reached another system.
type Multi struct {
	srv     *httptest.Server
	members []*BMC
	cert    *Cert

	mu   sync.Mutex
	reqs [][]Request
}

// NewMulti starts a multi-system service; o applies to every member (its Profile, MACs and
// Power are replaced by the member's).
func NewMulti(o Options, members []Member) *Multi {
	if o.Cert == nil {
		c, err := NewCert()
		if err != nil {
			panic("bmctest: " + err.Error())
		}
		o.Cert = c
	}
	m := &Multi{cert: o.Cert, reqs: make([][]Request, len(members))}
	for _, mb := range members {
		mo := o
		mo.Profile, mo.MACs, mo.Power = ProfileGeneric, mb.MACs, mb.Power
		m.members = append(m.members, newSim(mo, root+"/Systems/"+mb.ID, root+"/Managers/"+mb.ID, mb.Name))
	}
	m.srv = httptest.NewUnstartedServer(http.HandlerFunc(m.serve))
	m.srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{o.Cert.TLS}}
	m.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	m.srv.StartTLS()
	return m
}

// URL is the service's address (https://127.0.0.1:port), naming no system.
func (m *Multi) URL() string { return m.srv.URL }

// SystemURL is the address of member i's System, as bmc.address names it.
func (m *Multi) SystemURL(i int) string { return m.srv.URL + m.members[i].sys }

// System is member i, for its Stats and Idle.
func (m *Multi) System(i int) *BMC { return m.members[i] }

// Requests returns what member i received, in order.
func (m *Multi) Requests(i int) []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Request(nil), m.reqs[i]...)
}

// Writes counts the non-GET requests member i received.
func (m *Multi) Writes(i int) int {
	n := 0
	for _, r := range m.Requests(i) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			n++
		}
	}
	return n
}

// WriteCA writes the PEM certificate to trust for the service.
func (m *Multi) WriteCA(path string) error { return os.WriteFile(path, m.cert.CAPEM, 0o644) }

// Close stops the listener and every member.
func (m *Multi) Close() {
	for _, b := range m.members {
		b.Close()
	}
	m.srv.Close()
}

func (m *Multi) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch path {
	case root, root + "/Systems", root + "/Managers":
		if !m.members[0].authorized(r) && path != root {
			writeError(w, http.StatusUnauthorized, "Base.1.0.NoValidSession", "There is no valid session established with the implementation.")
			return
		}
		var sys, mgr []string
		for _, b := range m.members {
			sys, mgr = append(sys, b.sys), append(mgr, b.mgr)
		}
		switch path {
		case root:
			m.members[0].serviceRoot(w)
		case root + "/Systems":
			writeJSON(w, http.StatusOK, members(sys...))
		default:
			writeJSON(w, http.StatusOK, members(mgr...))
		}
		return
	}
	for i, b := range m.members {
		if path == b.sys || strings.HasPrefix(path, b.sys+"/") || path == b.mgr || strings.HasPrefix(path, b.mgr+"/") {
			m.mu.Lock()
			m.reqs[i] = append(m.reqs[i], Request{Method: r.Method, Path: path})
			m.mu.Unlock()
			b.serve(w, r)
			return
		}
	}
	writeError(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", "The resource at the URI "+path+" was not found.")
}
