package stages

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

var apiServer clustertest.Server

func TestMain(m *testing.M) {
	code := m.Run()
	apiServer.Stop()
	os.Exit(code)
}

// TestConfigureStageSecondRunSaysNothingChanged drives the stage adapter against a real API
// server: the first run applies, the second applies nothing and says so, Verify notices a deleted
// object.
func TestConfigureStageSecondRunSaysNothingChanged(t *testing.T) {
	work := t.TempDir()
	if err := os.WriteFile(Kubeconfig(work), apiServer.Kubeconfig(t), 0o600); err != nil {
		t.Fatal(err)
	}
	idms := "apiVersion: config.openshift.io/v1\nkind: ImageDigestMirrorSet\nmetadata: {name: stage-release}\nspec:\n  imageDigestMirrors:\n  - source: quay.io/openshift-release-dev/ocp-release\n    mirrors: [registry.site.example:8443/ocp/release]\n"
	if err := os.WriteFile(filepath.Join(work, "idms-oc-mirror.yaml"), []byte(idms), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &site.Site{Registry: site.Registry{Host: "registry.site.example:8443"}, Day1: site.Day1{ModuleBlacklist: []site.ModuleBlacklist{}}}
	var mu sync.Mutex
	var msgs []string
	env := &pipeline.Env{Site: s, WorkDir: work, Events: func(e pipeline.Event) { mu.Lock(); msgs = append(msgs, e.Message); mu.Unlock() }}
	st := Configure{ClientOptions: []cluster.Option{cluster.WithPollInterval(100 * time.Millisecond)}, Timeout: 10 * time.Second}
	ctx := context.Background()
	out, err := st.Run(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if res := out.(ConfigureOutput); len(res.Objects) != 2 || !strings.HasPrefix(msgs[len(msgs)-1], "2 of 2 objects created or configured") { // the IDMS and the OperatorHub
		t.Fatalf("first run: %+v, said %q", res, msgs[len(msgs)-1])
	}
	msgs = nil
	out2, err := st.Run(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, out2) {
		t.Errorf("a run that changes nothing must finish with the same output:\n%+v\n%+v", out, out2)
	}
	if last := msgs[len(msgs)-1]; !strings.HasPrefix(last, "nothing changed: all 2 objects") {
		t.Fatalf("second run should say nothing changed, said %q", last)
	}
	if err := st.Verify(ctx, env); err != nil {
		t.Fatal(err)
	}
	d := clustertest.Dynamic(t, apiServer.Config(t))
	if err := d.Resource(clustertest.GVR("config.openshift.io", "v1", "imagedigestmirrorsets")).Delete(ctx, "stage-release", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := st.Verify(ctx, env); err == nil || !strings.Contains(err.Error(), "ImageDigestMirrorSet/stage-release") {
		t.Fatalf("Verify should notice the deleted object: %v", err)
	}
}
