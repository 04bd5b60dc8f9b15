// Package installtest is a stand-in for the rendezvous host's assisted-service REST API (port
// 8090), speaking the shapes of its swagger (Cluster, Host, validations_info as a JSON string keyed
// by category) for the calls the install follower makes. Tests script host validations on it.
package installtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
)

// Server is the fake rendezvous API.
type Server struct {
	*httptest.Server
	// Token, when set, must arrive as Watcher-Authorization (agent installer token auth, 4.16+).
	Token string

	mu      sync.Mutex
	cluster map[string]any
	hosts   map[string]map[string]any            // by hostname
	vals    map[string]map[string]map[string]any // host -> validation id -> {id,status,message,category}
	Calls   int
}

// New starts a server with one cluster in status "insufficient" and no hosts.
func New(token string) *Server {
	s := &Server{Token: token, hosts: map[string]map[string]any{}, vals: map[string]map[string]map[string]any{}}
	s.cluster = map[string]any{
		"id": "8b3e2a5c-0f1d-4c5e-9b8a-2d6f7e1a3c4b", "kind": "Cluster", "name": "lab",
		"openshift_version": "4.20", "status": "insufficient", "status_info": "Cluster is not ready for install",
		"validations_info": `{"hosts-data":[{"id":"all-hosts-are-ready-to-install","status":"failure","message":"The cluster has hosts that are not ready to install."}]}`,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/assisted-install/v2/clusters", s.clusters)
	mux.HandleFunc("GET /api/assisted-install/v2/clusters/{id}", s.clusterByID)
	s.Server = httptest.NewServer(s.auth(mux))
	return s
}

func (s *Server) auth(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.Calls++
		s.mu.Unlock()
		if s.Token != "" && r.Header.Get("Watcher-Authorization") != s.Token {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"code":"401","href":"","id":401,"kind":"Error","reason":"Unauthorized"}`))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// SetCluster sets the cluster's status and status_info.
func (s *Server) SetCluster(status, info string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cluster["status"], s.cluster["status_info"] = status, info
}

// SetHost adds or updates a host's status.
func (s *Server) SetHost(name, role, status, info string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hosts[name]
	if h == nil {
		h = map[string]any{"id": "host-" + name, "kind": "Host", "requested_hostname": name, "role": role}
		s.hosts[name] = h
	}
	h["status"], h["status_info"] = status, info
}

// SetHostStage sets a host's progress.current_stage ("Writing image to disk", "Rebooting", …).
func (s *Server) SetHostStage(name, stage string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.hosts[name]; h != nil {
		h["progress"] = map[string]any{"current_stage": stage}
	}
}

// SetValidation sets one host validation (category: hardware, network, operators, ...).
func (s *Server) SetValidation(host, category, id, status, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vals[host] == nil {
		s.vals[host] = map[string]map[string]any{}
	}
	s.vals[host][id] = map[string]any{"id": id, "status": status, "message": message, "category": category}
}

func (s *Server) snapshot() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := map[string]any{}
	for k, v := range s.cluster {
		c[k] = v
	}
	names := make([]string, 0, len(s.hosts))
	for n := range s.hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	hosts := []any{}
	for _, n := range names {
		h := map[string]any{}
		for k, v := range s.hosts[n] {
			h[k] = v
		}
		groups := map[string][]map[string]any{}
		for _, v := range s.vals[n] {
			cat := v["category"].(string)
			groups[cat] = append(groups[cat], map[string]any{"id": v["id"], "status": v["status"], "message": v["message"]})
		}
		js, _ := json.Marshal(groups)
		h["validations_info"] = string(js) // a JSON document in a string, as the API sends it
		hosts = append(hosts, h)
	}
	c["hosts"] = hosts
	return c
}

func (s *Server) clusters(w http.ResponseWriter, r *http.Request) {
	c := s.snapshot()
	if r.URL.Query().Get("with_hosts") != "true" {
		delete(c, "hosts")
	}
	writeJSON(w, []any{c})
}

func (s *Server) clusterByID(w http.ResponseWriter, r *http.Request) {
	c := s.snapshot()
	if !strings.EqualFold(r.PathValue("id"), c["id"].(string)) {
		w.WriteHeader(http.StatusNotFound)
		writeJSON(w, map[string]any{"code": "404", "kind": "Error", "reason": "cluster not found"})
		return
	}
	writeJSON(w, c)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
