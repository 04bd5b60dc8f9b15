package progress

import (
	"encoding/json"
	"io"
	"sync"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// JSONRenderer writes one JSON object per event and line, for --output json.
type JSONRenderer struct {
	mu  sync.Mutex
	enc *json.Encoder
}

// NewJSON returns a renderer writing JSON lines to w.
func NewJSON(w io.Writer) *JSONRenderer {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &JSONRenderer{enc: enc}
}

// Handle writes e as one line. Write errors are dropped: display must never stop a run.
func (r *JSONRenderer) Handle(e pipeline.Event) {
	e.Time = stamp(e)
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = r.enc.Encode(e)
}

// Close does nothing: every line is written when handled.
func (r *JSONRenderer) Close() error { return nil }
