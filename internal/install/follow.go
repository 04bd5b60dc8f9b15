package install

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/poll"
	"github.com/bootstrap-dev/bootstrap/internal/redact"
)

// apiPath is the assisted-service REST base path on the rendezvous host.
const apiPath = "/api/assisted-install/v2"

// Validation is one entry of a host's or the cluster's validations_info.
type Validation struct {
	ID      string `json:"id"`
	Status  string `json:"status"` // success, failure, pending, error, disabled
	Message string `json:"message"`
}

// apiHost is the part of assisted-service's Host model the follower reads.
type apiHost struct {
	ID                string `json:"id"`
	RequestedHostname string `json:"requested_hostname"`
	Role              string `json:"role"`
	Status            string `json:"status"`
	StatusInfo        string `json:"status_info"`
	ValidationsInfo   string `json:"validations_info"`
	Progress          struct {
		CurrentStage string `json:"current_stage"`
	} `json:"progress"`
}

// apiCluster is the part of assisted-service's Cluster model the follower reads.
type apiCluster struct {
	ID              string    `json:"id"`
	Name            string    `json:"name"`
	Status          string    `json:"status"`
	StatusInfo      string    `json:"status_info"`
	ValidationsInfo string    `json:"validations_info"`
	Hosts           []apiHost `json:"hosts"`
}

// FindingKind says what a Finding reports.
type FindingKind string

// Finding kinds.
const (
	ValidationFailing  FindingKind = "validation-failing"
	ValidationResolved FindingKind = "validation-resolved"
	HostStatus         FindingKind = "host-status"
	// HostStage is a host's install progress stage changing (progress.current_stage: "Writing
	// image to disk", "Rebooting", "Configuring", "Joined", "Done"); Status holds the stage.
	HostStage     FindingKind = "host-stage"
	ClusterStatus FindingKind = "cluster-status"
)

// Finding is one change seen on the rendezvous host's API.
type Finding struct {
	Kind FindingKind `json:"kind"`
	// Host is the requested host name ("" for the cluster).
	Host       string `json:"host,omitempty"`
	Validation string `json:"validation,omitempty"`
	Status     string `json:"status"`
	Message    string `json:"message,omitempty"`
}

func (f Finding) String() string {
	who := "cluster"
	if f.Host != "" {
		who = "host " + f.Host
	}
	switch f.Kind {
	case ValidationFailing:
		return fmt.Sprintf("%s: validation %s %s: %s", who, f.Validation, f.Status, f.Message)
	case ValidationResolved:
		return fmt.Sprintf("%s: validation %s passes now: %s", who, f.Validation, f.Message)
	case HostStage:
		return fmt.Sprintf("%s: stage %s", who, f.Status)
	default:
		return fmt.Sprintf("%s: %s: %s", who, f.Status, f.Message)
	}
}

// Follower reads the rendezvous host's install API and reports what changed. Not safe for
// concurrent use; one goroutine calls Poll or Follow.
type Follower struct {
	// BaseURL is "http://<rendezvousIP>:8090".
	BaseURL string
	// WatcherToken is the agent installer's watcher JWT (openshift-install's auth asset), sent as
	// Watcher-Authorization; empty for releases before token auth.
	WatcherToken string
	Client       *http.Client
	// Interval between polls in Follow (default 10 s).
	Interval time.Duration

	validations map[string]Validation // key host/id
	status      map[string]string     // key host ("" for cluster)
	stage       map[string]string     // key host
}

// clusters reads the registered clusters with their hosts.
func (f *Follower) clusters(ctx context.Context) ([]apiCluster, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(f.BaseURL, "/")+apiPath+"/clusters?with_hosts=true", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if f.WatcherToken != "" {
		req.Header.Set("Watcher-Authorization", f.WatcherToken)
	}
	c := f.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("rendezvous API: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// redacted of the token, then clipped (a token cut in half is no longer recognised)
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("rendezvous API: GET clusters: %s: %s", resp.Status, redact.New(f.WatcherToken).Clip(bytes.TrimSpace(b), 512))
	}
	var out []apiCluster
	if err := json.NewDecoder(io.LimitReader(resp.Body, 32<<20)).Decode(&out); err != nil {
		return nil, fmt.Errorf("rendezvous API: decode clusters: %w", err)
	}
	return out, nil
}

// Poll reads the API once and returns what changed since the last Poll: validations that started
// failing (or changed message while failing), validations that pass again, and status changes of
// the cluster and each host. Order is deterministic (cluster first, hosts by name, ids sorted).
func (f *Follower) Poll(ctx context.Context) ([]Finding, error) {
	clusters, err := f.clusters(ctx)
	if err != nil {
		return nil, err
	}
	if f.validations == nil {
		f.validations, f.status, f.stage = map[string]Validation{}, map[string]string{}, map[string]string{}
	}
	var out []Finding
	for _, c := range clusters {
		out = append(out, f.diff("", c.Status, c.StatusInfo, c.ValidationsInfo)...)
		hosts := append([]apiHost(nil), c.Hosts...)
		sort.Slice(hosts, func(a, b int) bool { return hostName(hosts[a]) < hostName(hosts[b]) })
		for _, h := range hosts {
			out = append(out, f.diff(hostName(h), h.Status, h.StatusInfo, h.ValidationsInfo)...)
			if s := h.Progress.CurrentStage; s != "" && f.stage[hostName(h)] != s {
				f.stage[hostName(h)] = s
				out = append(out, Finding{Kind: HostStage, Host: hostName(h), Status: s})
			}
		}
	}
	return out, nil
}

func hostName(h apiHost) string {
	if h.RequestedHostname != "" {
		return h.RequestedHostname
	}
	return h.ID
}

func (f *Follower) diff(host, status, info, validations string) []Finding {
	var out []Finding
	kind := ClusterStatus
	if host != "" {
		kind = HostStatus
	}
	if status != "" && f.status[host] != status {
		f.status[host] = status
		out = append(out, Finding{Kind: kind, Host: host, Status: status, Message: info})
	}
	if validations == "" {
		return out
	}
	var groups map[string][]Validation
	if err := json.Unmarshal([]byte(validations), &groups); err != nil {
		return append(out, Finding{Kind: kind, Host: host, Status: "unreadable-validations", Message: err.Error()})
	}
	var all []Validation
	for _, vs := range groups {
		all = append(all, vs...)
	}
	sort.Slice(all, func(a, b int) bool { return all[a].ID < all[b].ID })
	for _, v := range all {
		key := host + "/" + v.ID
		prev, seen := f.validations[key]
		f.validations[key] = v
		failing := v.Status == "failure" || v.Status == "error"
		wasFailing := seen && (prev.Status == "failure" || prev.Status == "error")
		switch {
		case failing && (!wasFailing || prev.Message != v.Message):
			out = append(out, Finding{Kind: ValidationFailing, Host: host, Validation: v.ID, Status: v.Status, Message: v.Message})
		case !failing && wasFailing && v.Status == "success":
			out = append(out, Finding{Kind: ValidationResolved, Host: host, Validation: v.ID, Status: v.Status, Message: v.Message})
		}
	}
	return out
}

// Failing returns the validations failing as of the last Poll, as findings.
func (f *Follower) Failing() []Finding {
	var out []Finding
	for key, v := range f.validations {
		if v.Status == "failure" || v.Status == "error" {
			host, _, _ := strings.Cut(key, "/")
			out = append(out, Finding{Kind: ValidationFailing, Host: host, Validation: v.ID, Status: v.Status, Message: v.Message})
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Host+out[a].Validation < out[b].Host+out[b].Validation })
	return out
}

// Follow polls until ctx ends, reporting each finding. API errors (the host rebooting, the service
// not up yet, the rendezvous host leaving the cluster after bootstrap) are reported once each as
// unreachable and polling goes on.
func (f *Follower) Follow(ctx context.Context, report func(Finding)) {
	interval := f.Interval
	if interval <= 0 {
		interval = 10 * time.Second
	}
	lastErr := ""
	_ = poll.Until(ctx, poll.Every{Interval: interval}, func(ctx context.Context) (bool, error) {
		fs, err := f.Poll(ctx)
		switch {
		case err != nil && ctx.Err() == nil && err.Error() != lastErr:
			lastErr = err.Error()
			report(Finding{Kind: ClusterStatus, Status: "api-unreachable", Message: err.Error()})
		case err == nil:
			lastErr = ""
			for _, x := range fs {
				report(x)
			}
		}
		return false, nil // until ctx ends
	})
}
