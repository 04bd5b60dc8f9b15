package install

import "testing"

// TestTrackerFollowsAnInstall feeds the findings an agent-based install produces, in the order
// the assisted service reports them, and checks the phase and node states after each.
func TestTrackerFollowsAnInstall(t *testing.T) {
	tr := NewTracker([]string{"gpu-1", "ctrl-0", "gpu-0"})
	steps := []struct {
		f       *Finding
		reached *string
		changed bool
		phase   int
		done    int
		states  string
	}{
		{nil, nil, false, 1, 0, "3 waiting (ctrl-0, gpu-0, gpu-1)"},
		{&Finding{Kind: ClusterStatus, Status: "ready"}, nil, false, 1, 0, "3 waiting (ctrl-0, gpu-0, gpu-1)"},
		{&Finding{Kind: HostStatus, Host: "ctrl-0", Status: "known"}, nil, true, 1, 0, "1 known (ctrl-0) · 2 waiting (gpu-0, gpu-1)"},
		{&Finding{Kind: ClusterStatus, Status: "preparing-for-installation"}, nil, true, 2, 0, ""},
		{&Finding{Kind: ClusterStatus, Status: "installing"}, nil, true, 3, 0, ""},
		{&Finding{Kind: HostStage, Host: "ctrl-0", Status: "Writing image to disk"}, nil, true, 3, 0, ""},
		{&Finding{Kind: HostStage, Host: "gpu-0", Status: "Writing image to disk"}, nil, true, 3, 0, ""},
		{&Finding{Kind: HostStage, Host: "gpu-1", Status: "Rebooting"}, nil, true, 3, 0,
			"1 Rebooting (gpu-1) · 2 Writing image to disk (ctrl-0, gpu-0)"},
		// a status after a stage says less: ignored until it is "installed"
		{&Finding{Kind: HostStatus, Host: "gpu-1", Status: "installing-in-progress"}, nil, false, 3, 0, ""},
		{nil, ptr(BootstrapComplete), true, 4, 0, ""},
		// the API reporting an earlier phase late never moves the bar back
		{&Finding{Kind: ClusterStatus, Status: "installing"}, nil, false, 4, 0, ""},
		{&Finding{Kind: HostStage, Host: "ctrl-0", Status: "Done"}, nil, true, 4, 1, ""},
		{&Finding{Kind: HostStatus, Host: "gpu-0", Status: "installed"}, nil, true, 4, 2,
			"2 Done · 1 Rebooting (gpu-1)"},
		{&Finding{Kind: ClusterStatus, Status: "api-unreachable"}, nil, false, 4, 2, ""},
		{nil, ptr(InstallComplete), true, 5, 2, ""},
		{nil, ptr(""), true, 6, 3, "3 Done"},
	}
	for i, s := range steps {
		var changed bool
		switch {
		case s.f != nil:
			changed = tr.Finding(*s.f)
		case s.reached != nil:
			changed = tr.Reached(*s.reached)
		}
		snap := tr.Snapshot()
		if changed != s.changed || snap.Phase != s.phase || snap.NodesDone != s.done || snap.Nodes != 3 || snap.Phases != len(Phases) ||
			snap.Name != Phases[s.phase-1] || (s.states != "" && snap.States != s.states) {
			t.Errorf("step %d: changed %t phase %d (%s) done %d/%d states %q; want changed %t phase %d done %d states %q",
				i, changed, snap.Phase, snap.Name, snap.NodesDone, snap.Nodes, snap.States, s.changed, s.phase, s.done, s.states)
		}
	}
}

func ptr(s string) *string { return &s }
