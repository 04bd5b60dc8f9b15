package stages

import (
	"encoding/json"
	"sync"
)

// memSteps is an in-memory pipeline.Steps (the runner's journal is not this package's concern).
type memSteps struct {
	mu      sync.Mutex
	done    map[string]json.RawMessage
	records int
}

func (s *memSteps) Done(key string, out any) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, ok := s.done[key]
	if ok && out != nil {
		_ = json.Unmarshal(raw, out)
	}
	return ok
}

func (s *memSteps) Record(key string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done[key] = b
	s.records++
	return nil
}

// Previous reports nothing: memSteps holds a single attempt.
func (s *memSteps) Previous(string, any) bool { return false }

func newMemSteps() *memSteps { return &memSteps{done: map[string]json.RawMessage{}} }
