package pipeline

import "os"

// PendingWitness rewrites the journal's witness as it is between the two phases of appending
// the journal's newest line (pending, fsync'd; the line not yet complete): what a kill -9 or a
// power loss in the middle of an append leaves. Tests then cut that line short.
func PendingWitness(journal string) error {
	data, err := os.ReadFile(journal)
	if err != nil {
		return err
	}
	h := headOf(scan(journal, data).lines)
	h.Pending = true
	w, err := openHead(journal)
	if err != nil {
		return err
	}
	defer w.close()
	return w.write(h)
}
