package upgrade

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// JSON is the plan as indented JSON; the same plan gives the same bytes.
func (p *Plan) JSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	err := enc.Encode(p)
	return b.Bytes(), err
}

// WriteTable writes the plan for a person: the hops, then per hop its risks, gate, steps and
// acks, then what to carry, the acceptances, the blockers and what could not be decided.
func (p *Plan) WriteTable(w io.Writer) error {
	var b bytes.Buffer
	verified := "hashes verified against content.json"
	if !p.Graph.Verified {
		verified = "hashes NOT verified"
	}
	fmt.Fprintf(&b, "upgrade plan %s -> %s (%s), graph %s: %s; %s\n", p.From, p.To, p.Arch, p.Graph.Dir, strings.Join(p.Graph.Channels, ", "), verified)
	if p.EUS != nil {
		fmt.Fprintf(&b, "EUS-to-EUS via channel %s: pause pools %s before hop 1, unpause after the last hop (workers reboot once)\n",
			p.EUS.Channel, strings.Join(p.EUS.PausePools, ", "))
	}
	for _, r := range p.Graph.RemovedEdges {
		fmt.Fprintf(&b, "blocked edge removed: %s\n", r)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOP\tFROM\tTO\tCHANNEL\tEDGE\tRISKS\tCARRIED\tPAYLOAD")
	for i, h := range p.Hops {
		risks := "-"
		if len(h.Risks) > 0 {
			var rs []string
			for _, r := range h.Risks {
				s := r.Name + ":" + string(r.Decision)
				if r.AcceptedBy != "" {
					s += ",accepted by " + r.AcceptedBy
				}
				rs = append(rs, s)
			}
			risks = strings.Join(rs, " ")
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, h.From, h.To, h.Channel, h.Edge, risks, short(h.Carried), h.Payload)
	}
	tw.Flush()
	for i, h := range p.Hops {
		if len(h.Risks)+len(h.Gate)+len(h.Before)+len(h.After)+len(h.Acks)+len(h.Subscriptions) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\nhop %d: %s -> %s (edge from %s)\n", i+1, h.From, h.To, strings.Join(h.Sources, ", "))
		for _, r := range h.Risks {
			fmt.Fprintf(&b, "  risk %s [%s] %s\n    %s\n", r.Name, r.Decision, r.URL, r.Source)
		}
		for _, m := range h.Subscriptions {
			fmt.Fprintf(&b, "  subscription %s: CatalogSource %s -> %s (namespace %s)  [%s]\n", m.Subject(), m.From, m.To, m.SourceNamespace, m.Source)
		}
		for _, s := range h.Before {
			fmt.Fprintf(&b, "  before: %s: %s  [%s]\n", s.Subject, s.Action, s.Source)
		}
		for _, v := range h.Gate {
			fmt.Fprintf(&b, "  %-5s %s %s: %s  [%s]\n", strings.ToUpper(v.Result), v.Check, v.Subject, v.Message, v.Source)
		}
		for _, a := range h.Acks {
			given := "NEEDED"
			if a.Given {
				given = "given"
			}
			fmt.Fprintf(&b, "  ack %s: %s  [%s]\n", a.Key, given, a.Source)
		}
		for _, s := range h.After {
			fmt.Fprintf(&b, "  after: %s: %s  [%s]\n", s.Subject, s.Action, s.Source)
		}
	}
	fmt.Fprintf(&b, "\nto carry (%d):\n", len(p.Images))
	for _, im := range p.Images {
		fmt.Fprintf(&b, "  %-16s %s  (%s)\n", im.Kind, im.Ref, im.For)
	}
	for _, a := range p.Accepts {
		fmt.Fprintf(&b, "accepted: %s by %s on %s\n", a.Risk, a.By, a.Hop)
	}
	for _, x := range p.Blockers {
		fmt.Fprintf(&b, "BLOCKER: %s\n", x)
	}
	for _, x := range p.Undecided {
		fmt.Fprintf(&b, "undecided offline: %s\n", x)
	}
	_, err := w.Write(b.Bytes())
	return err
}

func short(carried string) string {
	if carried == "yes" || carried == "no" {
		return carried
	}
	return "unchecked"
}
