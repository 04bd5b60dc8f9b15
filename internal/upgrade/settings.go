package upgrade

import "slices"

// StepSettings is the step that journals the settings a hop runs with and where each came from
// (a flag, the site profile's upgrade section at file:line:col, or the default). It is recorded
// before the hop's first step, and again when a resumed run's settings differ, so the journal
// holds what every execution used.
const StepSettings = "settings"

// Setting is one setting of a run that a flag, the site profile or a default gives: its value
// as the run uses it and where it came from.
type Setting struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// Setting sources, as journaled; a profile's is SourceProfile followed by the value's position.
const (
	SourceFlag    = "flag"    // "flag --soak"
	SourceProfile = "profile" // "profile /site/site.yaml:88:9"
	SourceDefault = "default"
)

// SettingsRecord is the data of the settings step.
type SettingsRecord struct {
	Settings []Setting `json:"settings"`
}

// RecordSettings journals the hop's settings step unless this attempt's last record of it holds
// the same settings. Nothing is recorded when there are none.
func RecordSettings(j Journal, hopTo string, s []Setting) error {
	if len(s) == 0 {
		return nil
	}
	key := hopTo + "/" + StepSettings
	var last SettingsRecord
	if j.Done(key, &last) && slices.Equal(last.Settings, s) {
		return nil
	}
	return j.Record(key, SettingsRecord{Settings: s})
}
