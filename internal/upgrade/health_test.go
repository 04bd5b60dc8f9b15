package upgrade_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// The hop pauses the machine API's MachineHealthChecks (the annotation the MHC controller
// skips on) before desiredUpdate, keeps them paused while nodes reboot and resumes them at close;
// one paused by someone else stays paused, one outside openshift-machine-api is not touched, and
// a kill between the pause and its record resumes them all the same.
func TestRunPausesMachineHealthChecks(t *testing.T) {
	l := newLab(t, upgradetest.LabOptions{Version: "4.17.10", Workers: []string{"w0", "w1"}}, upgradetest.Faults{})
	clustertest.InstallCRD(t, server.Config(t), upgradetest.MachineHealthCheckCRD())
	mhc := func(ns, name string, ann map[string]any) {
		md := map[string]any{"name": name, "namespace": ns}
		if ann != nil {
			md["annotations"] = ann
		}
		clustertest.Create(t, l.d, upgradetest.MHCs, map[string]any{"apiVersion": "machine.openshift.io/v1beta1", "kind": "MachineHealthCheck", "metadata": md})
	}
	mhc(upgrade.MachineAPINamespace, "workers", nil)
	mhc(upgrade.MachineAPINamespace, "infra", nil)
	mhc(upgrade.MachineAPINamespace, "manual", map[string]any{upgrade.MHCPausedAnnotation: ""})
	mhc(upgradetest.WorkloadNamespace, "elsewhere", nil)
	ann := func(ns, name string) (string, bool) {
		u, err := l.d.Resource(upgradetest.MHCs).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		v, ok := u.GetAnnotations()[upgrade.MHCPausedAnnotation]
		return v, ok
	}
	j := &upgradetest.Journal{}
	o := l.opts(t)
	kill := errors.New("killed after the pause, before its record")
	o.Crash = func(step string) error {
		if step == upgrade.StepHealthPause {
			return kill
		}
		return nil
	}
	if _, err := upgrade.Run(context.Background(), l.c, j, o); !errors.Is(err, kill) {
		t.Fatalf("first run: %v", err)
	}
	var during []string
	o.Crash = func(step string) error {
		if step == upgrade.StepDesired || step == upgrade.StepUnpause {
			for _, n := range []string{"workers", "infra", "manual"} {
				if _, ok := ann(upgrade.MachineAPINamespace, n); !ok {
					during = append(during, step+": "+n+" not paused")
				}
			}
		}
		return nil
	}
	if _, err := upgrade.Run(context.Background(), l.c, j, o); err != nil {
		t.Fatalf("resumed run: %v (journal %v)", err, j.Keys)
	}
	if len(during) > 0 {
		t.Errorf("during the hop: %s", strings.Join(during, "; "))
	}
	var rec struct{ HealthChecks, AlreadyPaused []string }
	j.Done("4.18.5/"+upgrade.StepHealthPause, &rec)
	if strings.Join(rec.HealthChecks, ",") != "infra,workers" || strings.Join(rec.AlreadyPaused, ",") != "manual" {
		t.Errorf("journaled pause %+v: want infra,workers paused by the hop (the resumed run finding its own value), manual already paused", rec)
	}
	var closed struct{ HealthChecks []string }
	j.Done("4.18.5/"+upgrade.StepClose, &closed)
	if strings.Join(closed.HealthChecks, ",") != "infra,workers" {
		t.Errorf("close resumed %v, want infra,workers", closed.HealthChecks)
	}
	for _, n := range []string{"workers", "infra"} {
		if v, ok := ann(upgrade.MachineAPINamespace, n); ok {
			t.Errorf("MachineHealthCheck %s still paused (%q) after the hop", n, v)
		}
	}
	if _, ok := ann(upgrade.MachineAPINamespace, "manual"); !ok {
		t.Error("the MachineHealthCheck paused before the hop was resumed by it")
	}
	if _, ok := ann(upgradetest.WorkloadNamespace, "elsewhere"); ok {
		t.Error("a MachineHealthCheck outside openshift-machine-api was paused")
	}
}
