package upgrade

import "time"

// StepNodes prefixes the per-node records of a hop: "<to>/node-transitions/<node>" holds the
// node's transitions seen so far, journaled when one is seen (never per poll), so a resumed run
// keeps the times the process that saw them measured, and the report shows them.
const StepNodes = "node-transitions"

// Transition is a node seen Done on a new rendered config.
type Transition struct {
	Config string    `json:"config"`
	At     time.Time `json:"at"`
	// Late: the node changed while no run watched it (between a kill and the resume); At is
	// when the resumed run first saw it.
	Late bool `json:"late,omitempty"`
}

// nodeRecord is one node's journaled transitions.
type nodeRecord struct {
	Node        string       `json:"node"`
	Transitions []Transition `json:"transitions"`
}

// note records per-node transitions seen in v, journaling each one.
func (w *watcher) note(v *View) error {
	if w.last == nil {
		w.last, w.moved = map[string]string{}, map[string][]Transition{}
		w.restored, w.late = map[string]bool{}, map[string]bool{}
	}
	for _, n := range v.Nodes {
		if !w.restored[n.Name] {
			w.restored[n.Name] = true
			w.restore(n.Name)
		}
		if n.State != "Done" || n.Current != n.Desired {
			w.late[n.Name] = false // this run sees it move
			continue
		}
		if b, ok := w.last[n.Name]; ok && b != n.Current {
			w.moved[n.Name] = append(w.moved[n.Name], Transition{Config: n.Current, At: v.At.UTC(), Late: w.late[n.Name]})
			rec := nodeRecord{Node: n.Name, Transitions: w.moved[n.Name]}
			if err := w.r.j.Record(w.r.key(StepNodes+"/"+n.Name), rec); err != nil {
				return err
			}
		}
		w.last[n.Name] = n.Current
		w.late[n.Name] = false
	}
	return nil
}

// restore reads what earlier runs of the hop saw of a node: its journaled transitions, else its
// config when the desiredUpdate intent was journaled. Either is the baseline of the node's next
// transition; one journaled by another process makes that transition Late (it happened unwatched
// when this run's first sight of the node is already past it).
func (w *watcher) restore(node string) {
	var rec nodeRecord
	if w.r.j.Done(w.r.key(StepNodes+"/"+node), &rec) && len(rec.Transitions) > 0 {
		w.moved[node] = rec.Transitions
		w.last[node] = rec.Transitions[len(rec.Transitions)-1].Config
		w.late[node] = true
		return
	}
	var in struct{ Nodes map[string]string }
	if w.r.j.Done(w.r.key(StepIntent), &in) && in.Nodes[node] != "" {
		w.last[node] = in.Nodes[node]
		w.late[node] = !w.r.intentHere
	}
}
