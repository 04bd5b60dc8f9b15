package report_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/report"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
)

// hopStage journals a hop's steps in the shapes upgrade.Run records them, then ends as trip
// says (nil: the hop succeeds).
type hopStage struct {
	to   string
	trip *upgrade.Trip
}

// hostile is a node name no cluster would accept, standing in for any recorded text that reaches
// the page: it must arrive escaped.
const hostile = `w0"><script>alert(1)</script><img src=x onerror=alert(2)>`

const (
	snapSum   = "1f0c4a7f4b8e61d92f8f2b51e0bd1a2c6d1d7a3e9c0b5f4e8d2a6c3b7e1f0a9d"
	staticSum = "9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f30211203f4e5d6c7b8a9"
)

func (s hopStage) Name() string                      { return "hop-" + s.to }
func (s hopStage) Summary() string                   { return "test hop" }
func (s hopStage) Inputs(*pipeline.Env) (any, error) { return s.to, nil }
func (s hopStage) Run(_ context.Context, env *pipeline.Env) (any, error) {
	at := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	settings := []upgrade.Setting{{Name: "soak", Value: "1h", Source: "profile /site/site.yaml:88:9"},
		{Name: "maxUnavailable", Value: "25%", Source: "flag --max-unavailable"}}
	if err := upgrade.RecordSettings(env.Steps, s.to, settings); err != nil {
		return nil, err
	}
	backup := upgrade.Backup{Node: "m0", At: at, Files: []upgrade.BackupFile{
		{Name: "snapshot_2026-12-06_100000.db", Size: 73400320, SHA256: snapSum},
		{Name: "static_kuberesources_2026-12-06_100000.tar.gz", Size: 81920, SHA256: staticSum}}}
	sig := cluster.Applied{Ref: cluster.Ref{APIVersion: "v1", Kind: "ConfigMap", Namespace: "openshift-config-managed", Name: "sha256-" + snapSum[:16]},
		Action: "created", SHA256: staticSum}
	steps := []struct {
		step string
		data any
	}{
		{upgrade.StepContract, map[string]string{"sha256": "c0ffee", "acceptedBy": "Jane Doe"}},
		{upgrade.StepBackup, backup},
		{upgrade.StepSignatures, map[string]any{"objects": []cluster.Applied{sig}}},
		{upgrade.StepPause, map[string]any{"pools": []string{"worker"}}},
		{upgrade.StepControlPlane, map[string]any{"history": upgrade.HistoryEntry{State: "Completed", Version: s.to, Verified: true}}},
	}
	if s.trip == nil {
		steps = append(steps, []struct {
			step string
			data any
		}{
			{upgrade.StepUnpause, map[string]any{"pools": []string{"worker"}, "maxUnavailable": "25%"}},
			{upgrade.StepClose, map[string]any{"history": upgrade.HistoryEntry{State: "Completed", Version: s.to},
				"nodes": map[string][]upgrade.Transition{hostile: {{Config: "rendered-worker-" + s.to, At: at.Add(20 * time.Minute)}},
					"m0": {{Config: "rendered-master-" + s.to, At: at.Add(10 * time.Minute)}}}}},
			{upgrade.StepAfterBackup, backup},
		}...)
	}
	for _, st := range steps {
		if err := env.Steps.Record(s.to+"/"+st.step, st.data); err != nil {
			return nil, err
		}
	}
	if s.trip != nil {
		return nil, s.trip
	}
	return map[string]bool{"done": true}, nil
}

// The HTML report's upgrade section holds what the markdown one does, from a real upgrade
// journal: each hop with its state, its steps with their times and evidence (the settings and
// their sources, the signatures, the pauses and unpauses, the CVO's verification), the etcd
// backups file by file with their SHA-256, the per-node transitions, and the stop with its
// cause and remedy; recorded text arrives escaped.
func TestReportUpgradeSectionInHTML(t *testing.T) {
	work := t.TempDir()
	trip := &upgrade.Trip{Kind: upgrade.TripDrainBlocked, Object: "PodDisruptionBudget workload/<b>db</b>",
		Cause: "allows 0 disruptions: node w1 cannot drain", Fix: "scale the workload or relax the PDB, then run again"}
	r := &pipeline.Runner{Stages: []pipeline.Stage{hopStage{to: "4.18.5"}, hopStage{to: "4.19.2", trip: trip}},
		WorkDir: filepath.Join(work, report.UpgradeDir), Command: "upgrade run"}
	if err := r.Run(context.Background(), pipeline.RunOptions{}); !errors.As(err, &trip) {
		t.Fatalf("run: %v, want the trip", err)
	}
	rep, err := report.Build(&pipeline.Runner{WorkDir: work}, "lab")
	if err != nil {
		t.Fatal(err)
	}
	var html, md bytes.Buffer
	if err := rep.HTML(&html); err != nil {
		t.Fatal(err)
	}
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	h := html.String()
	for _, want := range []string{
		`<a href="#upgrade">Upgrade</a>`, `<h2 id="upgrade">Upgrade</h2>`, `<span class="ok">hash chain verified</span>`,
		`<h3 id="upgrade-hop-4.18.5">hop-4.18.5: <span class="ok">succeeded</span></h3>`,
		`<h3 id="upgrade-hop-4.19.2">hop-4.19.2: <span class="bad">stopped</span></h3>`,
		`settings: soak 1h (profile /site/site.yaml:88:9); maxUnavailable 25% (flag --max-unavailable)`,
		"rollback contract accepted by Jane Doe", "signature ConfigMaps: ConfigMap openshift-config-managed/sha256-",
		"paused: worker", "unpaused: worker (maxUnavailable 25%)", "signature verified by the CVO: true",
		`<td>before the hop</td><td>m0</td><td>2026-12-06 10:00:00Z</td><td class="mono">snapshot_2026-12-06_100000.db</td>`,
		`<td class="mono">` + snapSum + `</td>`, `<td class="mono">` + staticSum + `</td>`, `<td>after the hop</td><td>m0</td>`,
		`<td>m0</td><td class="mono">rendered-master-4.18.5</td><td>2026-12-06 10:10:00Z</td>`,
		`<td class="mono">rendered-worker-4.18.5</td><td>2026-12-06 10:20:00Z</td>`,
		`<h3 id="upgrade-stops">Stops</h3>`, `<td>hop-4.19.2</td><td class="bad ev">PodDisruptionBudget workload/&lt;b&gt;db&lt;/b&gt;: allows 0 disruptions: node w1 cannot drain`,
		`<td class="ev">scale the workload or relax the PDB, then run again</td>`,
		`w0&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;`,
	} {
		if !strings.Contains(h, want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
	stepRow := regexp.MustCompile(`<tr><td>\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ</td><td class="mono">(settings|etcd-backup|close)</td>`)
	if n := len(stepRow.FindAllString(h, -1)); n != 5 { // settings and backup in both hops, close in the first
		t.Errorf("%d step rows with their times for settings, etcd-backup and close, want 5", n)
	}
	for _, bad := range []string{"<script", "<img", "<b>db"} {
		if strings.Contains(h, bad) {
			t.Errorf("the HTML report holds %q unescaped", bad)
		}
	}
	if n := strings.Count(h, `<td class="mono">`+snapSum+`</td>`); n != 3 {
		t.Errorf("the snapshot's SHA-256 is in %d backup rows, want 3 (before and after the first hop, before the stopped one)", n)
	}
	// the markdown says the same things
	for _, want := range []string{"### hop-4.18.5: succeeded", "### hop-4.19.2: stopped", "settings: soak 1h (profile /site/site.yaml:88:9)",
		"sha256 " + snapSum, "unpaused: worker (maxUnavailable 25%)", "scale the workload or relax the PDB"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the markdown report lacks %q", want)
		}
	}
	if t.Failed() {
		i := strings.Index(h, `<h2 id="upgrade">`)
		t.Logf("upgrade section:\n%s", h[max(i, 0):min(len(h), max(i, 0)+6000)])
	}

	// without an upgrade journal there is no section and no link to one
	var none bytes.Buffer
	empty, err := report.Build(&pipeline.Runner{WorkDir: t.TempDir()}, "lab")
	if err != nil {
		t.Fatal(err)
	}
	if err := empty.HTML(&none); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(none.String(), `id="upgrade"`) || strings.Contains(none.String(), `href="#upgrade"`) {
		t.Error("a report without an upgrade has an upgrade section")
	}
}
