package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"sort"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// Summary is what an auditor reads first: the site, what was installed and mirrored, the nodes,
// the verdict and the journal's integrity.
type Summary struct {
	Site         string `json:"site,omitempty"`
	Cluster      string `json:"cluster,omitempty"`
	Release      string `json:"release,omitempty"`      // the profile's release version
	ReleaseImage string `json:"releaseImage,omitempty"` // by digest, as the iso stage recorded it
	Images       int    `json:"images"`
	ImageBytes   int64  `json:"imageBytes"`
	ImagesFailed int    `json:"imagesFailed,omitempty"`
	// Verdict is "complete" when every stage succeeded, else what stands in the way.
	Verdict string        `json:"verdict"`
	Nodes   []NodeSummary `json:"nodes,omitempty"`
	// NodeGroups are the nodes grouped by state (nodeGroups): what the HTML's node matrix shows,
	// the healthy groups collapsed, so 128 nodes read as a few lines.
	NodeGroups []NodeGroup `json:"-"`
	// Defaults are the values bootstrap chose for the fields the profile leaves out (networks,
	// platform, timeouts), as `bootstrap validate` names them.
	Defaults []site.Chosen `json:"defaults,omitempty"`
}

// NodeSummary is one row of the per-node matrix.
type NodeSummary struct {
	Name         string   `json:"name"`
	Role         string   `json:"role,omitempty"`
	MACs         []string `json:"macs,omitempty"`
	RootDisk     string   `json:"rootDisk,omitempty"`
	BMCFirmware  string   `json:"bmcFirmware,omitempty"`
	Media        string   `json:"media,omitempty"` // the last virtual-media action and its outcome
	PowerActions int      `json:"powerActions"`
	Actions      int      `json:"actions"`
	LastAction   string   `json:"lastAction,omitempty"`
	Install      string   `json:"install,omitempty"` // the install stage's state
}

// summarize fills the summary from the report's own sections and, when known, the site profile.
func summarize(r *Report, s *site.Site) Summary {
	sum := Summary{Site: r.Site, Verdict: verdict(r.Stages)}
	for _, im := range r.Evidence.Images {
		sum.Images++
		sum.ImageBytes += im.Size
		if im.Error != "" {
			sum.ImagesFailed++
		}
	}
	fw := map[string]string{}
	for _, v := range r.Evidence.Versions {
		switch {
		case v.Component == "release image":
			sum.ReleaseImage = v.Version
		case strings.HasPrefix(v.Component, "BMC "):
			fw[strings.TrimPrefix(v.Component, "BMC ")] = v.Version
		}
	}
	install := ""
	for _, st := range r.Stages {
		if st.Name == "install" {
			install = string(st.State)
		}
	}
	index := map[string]int{}
	add := func(name string) *NodeSummary { // valid until the next add
		i, ok := index[name]
		if !ok {
			i = len(sum.Nodes)
			index[name] = i
			sum.Nodes = append(sum.Nodes, NodeSummary{Name: name, Install: install, BMCFirmware: fw[name]})
		}
		return &sum.Nodes[i]
	}
	if s != nil {
		sum.Site = or(s.Metadata.Name, sum.Site)
		sum.Cluster = s.Cluster.Name + "." + s.Cluster.BaseDomain
		sum.Release = s.Cluster.Release.Version
		sum.Defaults = s.Chosen()
		for _, n := range s.Nodes {
			ns := add(n.Name)
			ns.Role, ns.RootDisk = n.Role, n.RootDevice
			for _, i := range n.Interfaces {
				ns.MACs = append(ns.MACs, i.MACAddress)
			}
		}
	}
	for _, na := range r.Evidence.BMC {
		ns := add(na.Node)
		for _, a := range na.Actions {
			ns.Actions++
			ns.LastAction = a.Action + " " + ts(a.Time)
			switch {
			case strings.Contains(a.Action, "power"):
				ns.PowerActions++
			case strings.Contains(a.Action, "media") || strings.Contains(a.Action, "insert") || strings.Contains(a.Action, "eject"):
				ns.Media = a.Action + ": " + fieldsText(a.Data)
			}
		}
	}
	sum.NodeGroups = nodeGroups(sum.Nodes)
	return sum
}

// verdict says whether the pipeline is complete, or which stage stands in the way.
func verdict(stages []pipeline.StageStatus) string {
	if len(stages) == 0 {
		return "nothing recorded"
	}
	for _, st := range stages {
		switch st.State {
		case pipeline.StateSucceeded:
			continue
		case pipeline.StatePending:
			return "incomplete: " + st.Name + " has not run"
		default:
			return "incomplete: " + st.Name + " is " + string(st.State)
		}
	}
	return "complete: every stage succeeded (as journaled)"
}

// Field is one readable key and value of a step's or a BMC action's recorded data.
type Field struct {
	Key   string
	Value string
}

// fields flattens recorded JSON into key/value pairs (nested keys joined with dots, lists of
// plain values joined with commas), in full: evidence is never cut short.
func fields(raw json.RawMessage) []Field {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return []Field{{Value: string(raw)}}
	}
	var out []Field
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				key := k
				if prefix != "" {
					key = prefix + "." + k
				}
				walk(key, x[k])
			}
		case []any:
			plain := true
			var parts []string
			for _, e := range x {
				switch e.(type) {
				case map[string]any, []any:
					plain = false
				}
				parts = append(parts, scalar(e))
			}
			if plain {
				out = append(out, Field{prefix, strings.Join(parts, ", ")})
				return
			}
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", prefix, i), e)
			}
		default:
			out = append(out, Field{prefix, scalar(x)})
		}
	}
	walk("", v)
	return out
}

func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case string:
		return x
	case float64:
		return fmt.Sprint(x)
	case bool:
		return fmt.Sprint(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// fieldsText is fields on one line for Markdown cells: "key: value; key: value".
func fieldsText(raw json.RawMessage) string {
	var parts []string
	for _, f := range fields(raw) {
		if f.Key == "" {
			parts = append(parts, f.Value)
		} else {
			parts = append(parts, f.Key+": "+f.Value)
		}
	}
	return strings.ReplaceAll(strings.Join(parts, "; "), "|", "\\|")
}

// TimelineSVG draws every execution of every stage attempt on one time axis, a row per stage
// (green succeeded, red failed or killed, amber otherwise), with each node's first and last BMC
// action as a row of its own: an inline SVG, no script, no fetch.
func (r *Report) TimelineSVG() template.HTML {
	type bar struct {
		row        int
		start, end time.Time
		class      string
		title      string
	}
	var rows []string
	rowOf := map[string]int{}
	row := func(name string) int {
		if i, ok := rowOf[name]; ok {
			return i
		}
		rowOf[name] = len(rows)
		rows = append(rows, name)
		return len(rows) - 1
	}
	for _, st := range r.Stages {
		row(st.Name)
	}
	var bars []bar
	var t0, t1 time.Time
	span := func(a, b time.Time) {
		if !a.IsZero() && (t0.IsZero() || a.Before(t0)) {
			t0 = a
		}
		if b.After(t1) {
			t1 = b
		}
	}
	for _, a := range r.History.Attempts {
		for _, x := range a.Executions {
			end := x.Finished
			if end.IsZero() {
				end = x.Started
			}
			class := "warn"
			switch x.State {
			case pipeline.StateSucceeded:
				class = "ok"
			case pipeline.StateFailed, pipeline.StateInterrupted:
				class = "bad"
			}
			bars = append(bars, bar{row(a.Stage), x.Started, end, class,
				fmt.Sprintf("%s attempt %d (run %d): %s, %.1f s", a.Stage, a.Attempt, x.Run, x.State, x.Seconds)})
			span(x.Started, end)
		}
	}
	for _, n := range r.Evidence.BMC {
		if len(n.Actions) == 0 {
			continue
		}
		first, last := n.Actions[0].Time, n.Actions[len(n.Actions)-1].Time
		bars = append(bars, bar{row("node " + n.Node), first, last, "node",
			fmt.Sprintf("%s: %d BMC actions, %s to %s", n.Node, len(n.Actions), ts(first), ts(last))})
		span(first, last)
	}
	if len(bars) == 0 || !t1.After(t0) {
		return template.HTML(`<p class="muted">Nothing to draw: no stage has run.</p>`)
	}
	const (
		left, width, rowH = 150.0, 1000.0, 22.0
	)
	total := t1.Sub(t0).Seconds()
	x := func(t time.Time) float64 { return left + t.Sub(t0).Seconds()/total*width }
	h := rowH*float64(len(rows)) + 30
	var b strings.Builder
	fmt.Fprintf(&b, `<svg role="img" aria-label="timeline of stages and nodes" width="100%%" viewBox="0 0 %.0f %.0f">`, left+width+10, h)
	esc := template.HTMLEscapeString
	for i, name := range rows {
		y := float64(i) * rowH
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" class="lbl">%s</text>`, left-6, y+15, esc(name))
		fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" class="grid"/>`, left, left+width, y+rowH, y+rowH)
	}
	for _, br := range bars {
		w := x(br.end) - x(br.start)
		if w < 2 {
			w = 2
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.0f" class="%s"><title>%s</title></rect>`,
			x(br.start), float64(br.row)*rowH+4, w, rowH-8, br.class, esc(br.title))
	}
	axisY := rowH*float64(len(rows)) + 18
	for i := 0; i <= 4; i++ {
		t := t0.Add(time.Duration(float64(t1.Sub(t0)) * float64(i) / 4))
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" class="axis">%s</text>`, x(t), axisY, t.UTC().Format("15:04:05Z"))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
