package peerbody

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// endless is an answer that never ends: a JSON object whose Name grows for ever.
type endless struct{ started bool }

func (e *endless) Read(p []byte) (int, error) {
	if !e.started {
		e.started = true
		return copy(p, `{"Id":"1","Name":"`), nil
	}
	for i := range p {
		p[i] = 'A'
	}
	return len(p), nil
}

func TestLimits(t *testing.T) {
	tests := map[string]struct {
		body  string
		l     Limits
		want  string // "" means it decodes
		field string
	}{
		"within":            {`{"Name":"node-1","Mac":"aa:bb"}`, Limits{Body: 100, String: 10}, "", ""},
		"escaped quote":     {`{"Name":"a\"b\\"}`, Limits{String: 10}, "", ""},
		"long value":        {`{"Id":"1","Name":"` + strings.Repeat("x", 100) + `"}`, Limits{String: 64}, "longer than 64 bytes", "Name"},
		"escapes count":     {`{"Name":"` + strings.Repeat(`\u0041`, 20) + `"}`, Limits{String: 64}, "longer than 64", "Name"},
		"body":              {`{"Name":"` + strings.Repeat("x", 100) + `"}`, Limits{Body: 50}, "larger than 50 bytes", ""},
		"body exactly full": {`{"a":"b"}`, Limits{Body: 9}, "", ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var v map[string]any
			err := json.NewDecoder(Reader(strings.NewReader(tc.body), tc.l, "GET /x")).Decode(&v)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var le *LimitError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.want) || le.Field != tc.field {
				t.Fatalf("%v (field %q), want %q after %q", err, le.Field, tc.want, tc.field)
			}
		})
	}
}

// TestEndlessAnswer: an answer that never ends is refused after its cap, not read for ever.
func TestEndlessAnswer(t *testing.T) {
	r := Reader(&endless{}, Limits{Body: 8 << 20, String: 64 << 10}, "GET /redfish/v1/Systems/1")
	n, err := io.Copy(io.Discard, r)
	var le *LimitError
	if !errors.As(err, &le) || le.Body || le.Field != "Name" {
		t.Fatalf("%v", err)
	}
	if n > 64<<10+64 {
		t.Errorf("%d bytes passed before the refusal", n)
	}
	if !strings.Contains(err.Error(), `after "Name"`) || !strings.Contains(err.Error(), "65536 bytes") {
		t.Errorf("message does not name the limit and place: %v", err)
	}
}
