package handoff_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/handoff"
)

func ensureNamespace(t *testing.T, d dynamic.Interface, name string) {
	t.Helper()
	_, err := d.Resource(clustertest.Namespaces).Create(context.Background(), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

func argoStatus(phase, server string, more ...string) map[string]any {
	st := map[string]any{"phase": phase, "server": server, "repo": "Running", "applicationController": "Running", "redis": "Running"}
	for i := 0; i+1 < len(more); i += 2 {
		st[more[i]] = more[i+1]
	}
	return st
}

// When the cluster serves the ArgoCD kind, the instance is judged by the operator's verdict on
// it: Pending until phase Available with the server Running; a Failed phase names the failed
// components. Without the kind, the server Deployment decides (TestHandoff).
func TestWaitInstanceByArgoCDResource(t *testing.T) {
	cfg := server.Config(t)
	d := clustertest.Dynamic(t, cfg)
	clustertest.InstallCRD(t, cfg, clustertest.ArgoCDCRD())
	ensureNamespace(t, d, handoff.ArgoNamespace)
	c, err := cluster.New(cfg, cluster.WithPollInterval(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}

	// The operator creates the instance a moment after the CSV succeeds, reports it Pending,
	// then Available.
	done := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		_, err := d.Resource(clustertest.ArgoCDs).Namespace(handoff.ArgoNamespace).Create(context.Background(), &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": handoff.ArgoV1b1, "kind": "ArgoCD",
			"metadata": map[string]any{"name": handoff.InstanceName, "namespace": handoff.ArgoNamespace},
			"spec":     map[string]any{"server": map[string]any{"route": map[string]any{"enabled": true}}},
		}}, metav1.CreateOptions{})
		if err == nil {
			err = clustertest.SetStatus(d, clustertest.ArgoCDs, handoff.ArgoNamespace, handoff.InstanceName, argoStatus("Pending", "Pending", "repo", "Pending"), true)
		}
		if err == nil {
			time.Sleep(500 * time.Millisecond)
			err = clustertest.SetStatus(d, clustertest.ArgoCDs, handoff.ArgoNamespace, handoff.InstanceName,
				argoStatus("Available", "Running", "host", "openshift-gitops-server-openshift-gitops.apps.lab.example.com"), true)
		}
		done <- err
	}()
	var mu sync.Mutex
	var lines []string
	by, err := handoff.WaitInstance(context.Background(), c, 20*time.Second, func(s string) { mu.Lock(); lines = append(lines, s); mu.Unlock() })
	if gerr := <-done; gerr != nil {
		t.Fatalf("operator player: %v", gerr)
	}
	said := strings.Join(lines, "\n")
	if err != nil {
		t.Fatalf("WaitInstance: %v\n%s", err, said)
	}
	if by != "ArgoCD openshift-gitops/openshift-gitops" {
		t.Errorf("judged by %q, want the ArgoCD resource", by)
	}
	for _, want := range []string{"has not created the instance yet", "phase Pending, server Pending; waiting for repo Pending", "Available, server Running"} {
		if !strings.Contains(said, want) {
			t.Errorf("progress does not say %q:\n%s", want, said)
		}
	}
	// With no Route, the console URL is the host the operator reports.
	if u := handoff.URL(context.Background(), c, "apps.other.example.com"); u != "https://openshift-gitops-server-openshift-gitops.apps.lab.example.com" {
		t.Errorf("URL %q, want the ArgoCD resource's status.host", u)
	}

	clustertest.MustSetStatus(t, d, clustertest.ArgoCDs, handoff.ArgoNamespace, handoff.InstanceName,
		argoStatus("Failed", "Running", "repo", "Failed", "redis", "Failed"), true)
	_, err = handoff.WaitInstance(context.Background(), c, 5*time.Second, nil)
	var fe *cluster.FailedError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "phase Failed, server Running; failed: redis, repo") {
		t.Fatalf("a Failed instance: %v, want a FailedError naming redis and repo", err)
	}

	clustertest.MustSetStatus(t, d, clustertest.ArgoCDs, handoff.ArgoNamespace, handoff.InstanceName, argoStatus("Available", "Pending"), true)
	_, err = handoff.WaitInstance(context.Background(), c, 600*time.Millisecond, nil)
	var te *cluster.TimeoutError
	if !errors.As(err, &te) || te.Last != "phase Available, server Pending" {
		t.Fatalf("server not running: %v, want a TimeoutError", err)
	}
}

func TestArgoCDAvailable(t *testing.T) {
	for _, tc := range []struct {
		status map[string]any
		state  cluster.State
		msg    string
	}{
		{argoStatus("Available", "Running"), cluster.Done, "Available, server Running"},
		{argoStatus("Pending", "Running"), cluster.Pending, "phase Pending, server Running"},
		{argoStatus("Available", "Pending", "redis", "Pending"), cluster.Pending, "phase Available, server Pending; waiting for redis Pending"},
		{argoStatus("Available", "Running", "sso", "Failed"), cluster.Failed, "phase Available, server Running; failed: sso"},
		{map[string]any{"phase": "Pending", "conditions": []any{map[string]any{"type": "Reconciled", "status": "False", "reason": "ErrorOccurred", "message": "route host conflict"}}},
			cluster.Pending, "phase Pending, server unknown; not reconciled (ErrorOccurred): route host conflict"},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{"status": tc.status}}
		if st, msg := handoff.ArgoCDAvailable(u); st != tc.state || msg != tc.msg {
			t.Errorf("%v: got %v %q, want %v %q", tc.status, st, msg, tc.state, tc.msg)
		}
	}
}
