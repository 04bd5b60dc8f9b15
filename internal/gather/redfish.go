package gather

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/peerbody"
	"github.com/bootstrap-dev/bootstrap/internal/redact"
)

// RedfishSEL collects a BMC's system event log through Redfish: every LogService named SEL (Dell
// iDRAC: /redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Sel; others under Systems) with all
// its entries, following Members@odata.nextLink pages. Output is one JSON document.
type RedfishSEL struct {
	Node string
	// Endpoint is the BMC's base URL ("https://10.0.0.11").
	Endpoint string
	Username string
	// Password is read from the profile's secret reference at the moment of use; never logged.
	Password string
	// Client carries the TLS settings (the BMC's CA); nil means http.DefaultClient.
	Client *http.Client
}

// Name implements Source.
func (r RedfishSEL) Name() string { return path.Join("bmc", r.Node, "sel.json") }

type collection struct {
	Members  []map[string]any `json:"Members"`
	NextLink string           `json:"Members@odata.nextLink"`
}

func (r RedfishSEL) get(ctx context.Context, p string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(r.Endpoint, "/")+p, nil)
	if err != nil {
		return err
	}
	req.SetBasicAuth(r.Username, r.Password)
	req.Header.Set("Accept", "application/json")
	c := r.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("redfish %s: %w", p, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// redacted of the credentials, then clipped (a password cut in half is no longer recognised)
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		sc := redact.New()
		sc.AddBasic(r.Username, r.Password)
		return fmt.Errorf("redfish GET %s: %s: %s", p, resp.Status, sc.Clip(bytes.TrimSpace(b), 512))
	}
	// a page of the event log: 64 MiB at most, no one string (a message, an id) over 64 KiB
	return json.NewDecoder(peerbody.Reader(resp.Body, peerbody.Limits{Body: 64 << 20, String: 64 << 10}, "redfish GET "+p)).Decode(v)
}

func (r RedfishSEL) all(ctx context.Context, p string) ([]map[string]any, error) {
	var out []map[string]any
	for p != "" {
		var c collection
		if err := r.get(ctx, p, &c); err != nil {
			return out, err
		}
		out = append(out, c.Members...)
		p = c.NextLink
	}
	return out, nil
}

func odataID(m map[string]any) string { s, _ := m["@odata.id"].(string); return s }

// Collect implements Source.
func (r RedfishSEL) Collect(ctx context.Context, w io.Writer) error {
	var services []string
	for _, top := range []string{"/redfish/v1/Managers", "/redfish/v1/Systems"} {
		members, err := r.all(ctx, top)
		if err != nil {
			return err
		}
		for _, m := range members {
			logs, err := r.all(ctx, odataID(m)+"/LogServices")
			if err != nil {
				continue // not every manager or system has log services
			}
			for _, l := range logs {
				if id := odataID(l); strings.EqualFold(path.Base(id), "sel") {
					services = append(services, id)
				}
			}
		}
	}
	if len(services) == 0 {
		return fmt.Errorf("redfish %s: no SEL log service under Managers or Systems", r.Endpoint)
	}
	doc := map[string][]map[string]any{}
	for _, s := range services {
		entries, err := r.all(ctx, s+"/Entries")
		if err != nil {
			return err
		}
		doc[s] = entries
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
