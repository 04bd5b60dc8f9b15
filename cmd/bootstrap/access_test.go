package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// After install and handoff succeeded, status says how to reach the cluster (kubeconfig,
// console, the kubeadmin password's file, Argo CD and how to log in), in text and in -o json,
// and its NOTE column says what is true of each stage.
func TestStatusSaysWhatNow(t *testing.T) {
	dir := t.TempDir()
	site := writeLabSite(t, dir, "canary-access")
	work := filepath.Join(dir, ".bootstrap")
	if err := os.MkdirAll(filepath.Join(work, agentiso.InstallerDir, "auth"), 0o700); err != nil {
		t.Fatal(err)
	}
	pw := filepath.Join(work, agentiso.InstallerDir, "auth", "kubeadmin-password")
	write(t, pw, []byte("canary-access"), 0o600)
	kc := filepath.Join(work, "kubeconfig")
	write(t, kc, []byte("clusters:\n- cluster:\n    server: https://api.lab.bootstrap.test:6443\n"), 0o600)

	// Before anything ran: no access block, and the NOTE says so.
	_, out, _ := run(t, "status", "-f", site)
	if strings.Contains(out, "KUBECONFIG") || !strings.Contains(out, "not run yet") {
		t.Fatalf("status before any run:\n%s", out)
	}
	j, _, err := pipeline.OpenJournal(pipeline.JournalPath(work))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, e := range []pipeline.Entry{
		{Kind: pipeline.EntryStageStarted, Run: 1, Stage: "install", Attempt: 1, Reason: "first run", Time: now},
		{Kind: pipeline.EntryStageSucceeded, Run: 1, Stage: "install", Attempt: 1, Time: now,
			Data: json.RawMessage(`{"kubeconfig":` + jsonString(kc) + `,"cluster":{},"duration":{}}`)},
		{Kind: pipeline.EntryStageStarted, Run: 1, Stage: "handoff", Attempt: 1, Reason: "first run", Time: now},
		{Kind: pipeline.EntryStageSucceeded, Run: 1, Stage: "handoff", Attempt: 1, Time: now,
			Data: json.RawMessage(`{"objects":[],"csv":"x","instance":"y","rootApp":"z","sync":"Synced","health":"Healthy","url":"https://openshift-gitops-server-openshift-gitops.apps.lab.bootstrap.test"}`)},
	} {
		if _, err := j.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()

	code, out, errs := run(t, "status", "-f", site)
	for _, want := range []string{
		"export KUBECONFIG=" + kc,
		"console:  https://console-openshift-console.apps.lab.bootstrap.test",
		"user kubeadmin, password in " + pw,
		"Argo CD:  https://openshift-gitops-server-openshift-gitops.apps.lab.bootstrap.test",
		"LOG IN VIA OPENSHIFT",
		"secret/openshift-gitops-cluster --keys=admin.password",
		"succeeded " + now.Local().Format(time.TimeOnly) + " (ran: first run)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q (exit %d):\n%s%s", want, code, out, errs)
		}
	}
	if strings.Contains(out+errs, "canary-access") {
		t.Fatal("status printed the kubeadmin password")
	}
	// Without the profile (--dir only) the console's domain comes from the kubeconfig.
	_, out, _ = run(t, "status", "--dir", work)
	if !strings.Contains(out, "console:  https://console-openshift-console.apps.lab.bootstrap.test") {
		t.Errorf("status --dir:\n%s", out)
	}
	_, out, _ = run(t, "status", "-f", site, "-o", "json")
	_, _, data := jsonLinesOf(t, out)
	var st struct {
		Stages []struct{ Name string }
		Access Access
	}
	if err := json.Unmarshal(data, &st); err != nil || len(st.Stages) == 0 || st.Access.Kubeconfig != kc ||
		st.Access.KubeadminPasswordFile != pw || st.Access.ArgoCD == "" {
		t.Errorf("status -o json: %v %+v", err, st)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
