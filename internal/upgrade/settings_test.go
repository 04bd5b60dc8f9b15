package upgrade

import (
	"encoding/json"
	"testing"
)

// book is the part of a step journal RecordSettings uses: the last record of each key, and every
// record made.
type book struct {
	last    map[string][]byte
	records int
}

func (b *book) Done(key string, out any) bool {
	raw, ok := b.last[key]
	if ok && out != nil {
		_ = json.Unmarshal(raw, out)
	}
	return ok
}

func (b *book) Record(key string, data any) error {
	raw, err := json.Marshal(data)
	b.last[key], b.records = raw, b.records+1
	return err
}

// The settings step is recorded once per attempt while the settings stay the same, again when a
// resumed run's differ, and not at all when there are none.
func TestRecordSettings(t *testing.T) {
	j := &book{last: map[string][]byte{}}
	s := []Setting{{Name: "soak", Value: "1h", Source: SourceProfile + " /site/site.yaml:88:9"}}
	for range 2 {
		if err := RecordSettings(j, "4.18.5", s); err != nil {
			t.Fatal(err)
		}
	}
	if j.records != 1 {
		t.Errorf("the same settings recorded %d times, want once", j.records)
	}
	s2 := []Setting{{Name: "soak", Value: "5m0s", Source: SourceFlag + " --soak"}}
	if err := RecordSettings(j, "4.18.5", s2); err != nil {
		t.Fatal(err)
	}
	var got SettingsRecord
	if j.records != 2 || !j.Done("4.18.5/"+StepSettings, &got) || len(got.Settings) != 1 || got.Settings[0] != s2[0] {
		t.Errorf("changed settings: %d records, last %+v", j.records, got)
	}
	if err := RecordSettings(j, "4.19.2", nil); err != nil || j.records != 2 {
		t.Errorf("no settings: %v, %d records", err, j.records)
	}
}
