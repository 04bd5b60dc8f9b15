package gather_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/gather"
)

// idrac serves the part of a Dell iDRAC 9's Redfish tree that holds the SEL, paged two entries at
// a time as iDRAC pages with $skip.
func idrac(t *testing.T) *httptest.Server {
	pages := map[string]string{
		"/redfish/v1/Managers":                                                  `{"Members":[{"@odata.id":"/redfish/v1/Managers/iDRAC.Embedded.1"}]}`,
		"/redfish/v1/Managers/iDRAC.Embedded.1/LogServices":                     `{"Members":[{"@odata.id":"/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Lclog"},{"@odata.id":"/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Sel"}]}`,
		"/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Sel/Entries":         `{"Members":[{"Id":"1","Message":"The system is powered on."},{"Id":"2","Message":"The chassis is open."}],"Members@odata.nextLink":"/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Sel/Entries?$skip=2"}`,
		"/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Sel/Entries?$skip=2": `{"Members":[{"Id":"3","Message":"Fan 3 RPM is below the lower critical threshold."}]}`,
		"/redfish/v1/Systems":                                                   `{"Members":[{"@odata.id":"/redfish/v1/Systems/System.Embedded.1"}]}`,
	}
	return httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "root" || p != "calvin-rotated" {
			http.Error(w, `{"error":{"code":"Base.1.12.InsufficientPrivilege"}}`, http.StatusUnauthorized)
			return
		}
		key := r.URL.Path
		if r.URL.RawQuery != "" {
			key += "?" + r.URL.RawQuery
		}
		body, ok := pages[key]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
}

func TestRedfishSEL(t *testing.T) {
	srv := idrac(t)
	defer srv.Close()
	src := gather.RedfishSEL{Node: "master-0", Endpoint: srv.URL, Username: "root", Password: "calvin-rotated", Client: srv.Client()}
	var b strings.Builder
	if err := src.Collect(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	var doc map[string][]map[string]any
	if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc["/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Sel"]; len(got) != 3 || got[2]["Id"] != "3" {
		t.Fatalf("SEL entries across pages: %v", doc)
	}
	if src.Name() != "bmc/master-0/sel.json" {
		t.Fatal(src.Name())
	}
	src.Password = "wrong"
	err := src.Collect(context.Background(), &b)
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("bad credentials: %v", err)
	}
}
