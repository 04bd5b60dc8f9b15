package upgradetest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/openpgp" //nolint:staticcheck // see sign.go
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/mirror"
)

// Faults the simulators can play.
type Faults struct {
	// DegradedOperator never reaches the new version and reports Degraded=True (and
	// Progressing=False: it has given up) from the moment the update reaches it.
	DegradedOperator string
	// StuckOperator never reaches the new version and stays Progressing=True.
	StuckOperator string
	// DegradedNode's machine-config daemon reports Degraded when asked to update.
	DegradedNode string
	// DriverNode's GPU driver pod never becomes Ready.
	DriverNode string
}

// Sim plays the cluster-version operator and the machine-config operator on a real
// kube-apiserver, in their real objects and field names: ClusterVersion status.history
// (Partial, then Completed), status.desired and conditions; ClusterOperator status.versions;
// MachineConfigPool spec.configuration and status counts; the node annotations
// machineconfiguration.openshift.io/{currentConfig,desiredConfig,state,reason}. The MCO honours
// spec.paused and spec.maxUnavailable and does not finish a drain past a PodDisruptionBudget
// that allows no disruption for a pod on the node. The CVO refuses a minor update while
// Upgradeable=False, as its ClusterVersionUpgradeable precondition does (ReleaseAccepted=False,
// reason PreconditionChecks).
type Sim struct {
	D      dynamic.Interface
	Clock  *Clock
	Faults Faults
	// RequireSignatures has the CVO look the release's signature up as it does in the cluster
	// (ConfigMaps in openshift-config-managed labelled release.openshift.io/verification-signatures,
	// a binaryData key sha256-<hex>-N) and refuse the release without one (ReleaseAccepted=False,
	// RetrievePayload). Its content is verified when Keyring is set.
	RequireSignatures bool
	// Keyring, with RequireSignatures, has the CVO verify each signature found against it (an
	// OpenPGP signed atomic container signature naming the release digest, see Signer): one
	// signed by another key is refused as a missing one is.
	Keyring openpgp.EntityList
	// Tick is the real time between reconciles (default 20 ms).
	Tick time.Duration
	// RetryAfter is how long (on the Clock) the CVO waits to retry a release it refused (0: at
	// every reconcile), keeping ReleaseAccepted=False and its time meanwhile, as the real one does
	// (see upgrade.Thresholds.ReleaseRetry); a new spec.desiredUpdate is tried at once.
	RetryAfter time.Duration
	// Catalogs has the sim play OLM's catalog operator too: each new CatalogSource turns READY.
	Catalogs bool

	mu        sync.Mutex
	drain     map[string]int // node -> ticks spent draining
	refused   string         // the image last refused, when
	refusedAt time.Time
}

// Start runs the simulators until the test ends.
func (s *Sim) Start(t testing.TB) {
	t.Helper()
	if s.Tick == 0 {
		s.Tick = 20 * time.Millisecond
	}
	s.drain = map[string]int{}
	reconcileLoop(t, "simulator", s.Tick, s.reconcile)
}

func (s *Sim) now() string { return s.Clock.Now().UTC().Format(time.RFC3339) }

func (s *Sim) reconcile(ctx context.Context) error {
	if err := s.cvo(ctx); err != nil {
		return fmt.Errorf("cvo: %w", err)
	}
	if err := s.mco(ctx); err != nil {
		return fmt.Errorf("mco: %w", err)
	}
	if err := s.rendered(ctx); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	if err := s.gpu(ctx); err != nil {
		return fmt.Errorf("gpu operator: %w", err)
	}
	if s.Catalogs {
		if err := s.catalogs(ctx); err != nil {
			return fmt.Errorf("catalog operator: %w", err)
		}
	}
	return nil
}

func minor(v string) string {
	p := strings.SplitN(v, ".", 3)
	if len(p) < 2 {
		return v
	}
	return p[0] + "." + p[1]
}

// cvo moves ClusterVersion and the ClusterOperators one operator per tick towards
// spec.desiredUpdate.
func (s *Sim) cvo(ctx context.Context) error {
	cvs := s.D.Resource(clustertest.ClusterVersions)
	cv, err := cvs.Get(ctx, "version", metav1.GetOptions{})
	if err != nil {
		return err
	}
	want, _, _ := unstructured.NestedString(cv.Object, "spec", "desiredUpdate", "version")
	image, _, _ := unstructured.NestedString(cv.Object, "spec", "desiredUpdate", "image")
	have, _, _ := unstructured.NestedString(cv.Object, "status", "desired", "version")
	if want == "" {
		return nil
	}
	conds, _, _ := unstructured.NestedSlice(cv.Object, "status", "conditions")
	hist, _, _ := unstructured.NestedSlice(cv.Object, "status", "history")
	now := s.now()
	if want != have {
		if s.RetryAfter > 0 && s.refused == image && s.Clock.Now().Sub(s.refusedAt) < s.RetryAfter {
			return nil
		}
		s.refused, s.refusedAt = image, s.Clock.Now() // cleared below when it is accepted
		if u := getCond(conds, "Upgradeable"); u != nil && u["status"] == "False" && minor(want) != minor(have) {
			conds = setCond(conds, condition("ReleaseAccepted", "False", "PreconditionChecks",
				fmt.Sprintf("Preconditions failed for payload loaded version=%q image=%q: Precondition \"ClusterVersionUpgradeable\" failed because of %q: %v", want, image, u["reason"], u["message"]), now))
			return s.writeCV(ctx, cv, conds, hist, nil)
		}
		if s.RequireSignatures {
			ok, err := s.signed(ctx, image)
			if err != nil {
				return err
			}
			if !ok {
				conds = setCond(conds, condition("ReleaseAccepted", "False", "RetrievePayload",
					fmt.Sprintf("Retrieving payload failed version=%q image=%q failure=The update cannot be verified: unable to verify %s against keyrings: verifier-public-key-redhat", want, image, digest(image)), now))
				return s.writeCV(ctx, cv, conds, hist, nil)
			}
		}
		s.refused = ""
		hist = append([]any{map[string]any{"state": "Partial", "version": want, "image": image, "startedTime": now,
			"completionTime": nil, "verified": true}}, hist...)
		conds = setCond(conds, condition("ReleaseAccepted", "True", "PayloadLoaded", "Payload loaded version=\""+want+"\"", now))
		conds = setCond(conds, condition("Progressing", "True", "", "Working towards "+want, now))
		return s.writeCV(ctx, cv, conds, hist, map[string]any{"version": want, "image": image})
	}
	if len(hist) == 0 {
		return nil
	}
	h0, _ := hist[0].(map[string]any)
	if h0["state"] == "Completed" {
		return nil
	}
	done, err := s.operators(ctx, want)
	if err != nil || !done {
		return err
	}
	h0["state"], h0["completionTime"] = "Completed", now
	conds = setCond(conds, condition("Progressing", "False", "", "Cluster version is "+want, now))
	return s.writeCV(ctx, cv, conds, hist, nil)
}

func (s *Sim) writeCV(ctx context.Context, cv *unstructured.Unstructured, conds, hist []any, desired map[string]any) error {
	_ = unstructured.SetNestedSlice(cv.Object, conds, "status", "conditions")
	_ = unstructured.SetNestedSlice(cv.Object, hist, "status", "history")
	if desired != nil {
		_ = unstructured.SetNestedMap(cv.Object, desired, "status", "desired")
	}
	_, err := s.D.Resource(clustertest.ClusterVersions).UpdateStatus(ctx, cv, metav1.UpdateOptions{})
	return err
}

// operators moves the first operator (by name, machine-config last as its run level puts it)
// not at want; it reports whether all are there.
func (s *Sim) operators(ctx context.Context, want string) (bool, error) {
	cos := s.D.Resource(clustertest.ClusterOperators)
	l, err := cos.List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	sort.Slice(l.Items, func(i, j int) bool {
		a, b := l.Items[i].GetName(), l.Items[j].GetName()
		if (a == "machine-config") != (b == "machine-config") {
			return b == "machine-config"
		}
		return a < b
	})
	now := s.now()
	for i := range l.Items {
		o := &l.Items[i]
		if opVersion(o) == want {
			continue
		}
		conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
		switch {
		case o.GetName() == s.Faults.DegradedOperator:
			conds = setCond(conds, condition("Degraded", "True", "SyncFailed", "the operand's deployment cannot roll out", now))
			conds = setCond(conds, condition("Progressing", "False", "", "", now))
		case o.GetName() == s.Faults.StuckOperator:
			conds = setCond(conds, condition("Progressing", "True", "Updating", "Working towards "+want+": 1 of 2 replicas updated", now))
		case o.GetName() == "machine-config":
			if err := s.render(ctx, want); err != nil {
				return false, err
			}
			conds = setCond(conds, condition("Progressing", "True", "", "Working towards "+want, now))
			if ok, err := s.poolDone(ctx, "master"); err != nil || !ok {
				break
			}
			conds = setCond(conds, condition("Progressing", "False", "", "Cluster version is "+want, now))
			_ = unstructured.SetNestedSlice(o.Object, []any{map[string]any{"name": "operator", "version": want}}, "status", "versions")
		default:
			_ = unstructured.SetNestedSlice(o.Object, []any{map[string]any{"name": "operator", "version": want}}, "status", "versions")
		}
		_ = unstructured.SetNestedSlice(o.Object, conds, "status", "conditions")
		_, err := cos.UpdateStatus(ctx, o, metav1.UpdateOptions{})
		return false, err
	}
	return true, nil
}

func opVersion(o *unstructured.Unstructured) string {
	vs, _, _ := unstructured.NestedSlice(o.Object, "status", "versions")
	for _, v := range vs {
		if m, _ := v.(map[string]any); m["name"] == "operator" {
			s, _ := m["version"].(string)
			return s
		}
	}
	return ""
}

// Rendered is the rendered config name the simulated MCO gives a pool at a version.
func Rendered(pool, version string) string { return "rendered-" + pool + "-" + version }

// render points every pool's spec.configuration at its rendered config for version.
func (s *Sim) render(ctx context.Context, version string) error {
	mcps := s.D.Resource(clustertest.MachineConfigPools)
	l, err := mcps.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range l.Items {
		p := &l.Items[i]
		want := Rendered(p.GetName(), version)
		if cur, _, _ := unstructured.NestedString(p.Object, "spec", "configuration", "name"); cur == want {
			continue
		}
		_ = unstructured.SetNestedField(p.Object, want, "spec", "configuration", "name")
		if _, err := mcps.Update(ctx, p, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err // one deleted since the list (the canary pool at close) is no longer rendered
		}
	}
	return nil
}

func (s *Sim) poolDone(ctx context.Context, name string) (bool, error) {
	p, err := s.D.Resource(clustertest.MachineConfigPools).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	conds, _, _ := unstructured.NestedSlice(p.Object, "status", "conditions")
	spec, _, _ := unstructured.NestedString(p.Object, "spec", "configuration", "name")
	st, _, _ := unstructured.NestedString(p.Object, "status", "configuration", "name")
	c := getCond(conds, "Updated")
	return c != nil && c["status"] == "True" && spec == st, nil
}

// blocked says whether a PodDisruptionBudget allowing no disruption covers a pod on node.
func (s *Sim) blocked(ctx context.Context, node string) (string, error) {
	pdbs, err := s.D.Resource(clustertest.GVR("policy", "v1", "poddisruptionbudgets")).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for _, p := range pdbs.Items {
		if n, _, _ := unstructured.NestedInt64(p.Object, "status", "disruptionsAllowed"); n != 0 {
			continue
		}
		ml, _, _ := unstructured.NestedStringMap(p.Object, "spec", "selector", "matchLabels")
		pods, err := s.D.Resource(clustertest.GVR("", "v1", "pods")).Namespace(p.GetNamespace()).List(ctx,
			metav1.ListOptions{LabelSelector: labels.SelectorFromSet(ml).String()})
		if err != nil {
			return "", err
		}
		for _, pod := range pods.Items {
			if on, _, _ := unstructured.NestedString(pod.Object, "spec", "nodeName"); on == node {
				return fmt.Sprintf("failed to drain node %s: error when evicting pods/%q -n %q: Cannot evict pod as it would violate the pod's disruption budget.", node, pod.GetName(), pod.GetNamespace()), nil
			}
		}
	}
	return "", nil
}

// Settle waits until the simulated MCO has written every pool's status (a pool it has not seen
// yet reads as not updated).
func (s *Sim) Settle(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		l, err := s.D.Resource(clustertest.MachineConfigPools).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		settled := len(l.Items) > 0
		for _, p := range l.Items {
			if ok, _ := s.poolDone(ctx, p.GetName()); !ok {
				settled = false
			}
		}
		if settled {
			return
		}
		time.Sleep(s.Tick)
	}
	t.Fatal("the simulated MCO did not settle the pools in 10 s")
}

func digest(image string) string { return image[strings.LastIndex(image, "@")+1:] }

// signed looks the release's signature up as the CVO's ConfigMap store does.
func (s *Sim) signed(ctx context.Context, image string) (bool, error) {
	l, err := s.D.Resource(clustertest.GVR("", "v1", "configmaps")).Namespace("openshift-config-managed").List(ctx,
		metav1.ListOptions{LabelSelector: mirror.SignatureLabel})
	if err != nil {
		return false, err
	}
	prefix := strings.Replace(digest(image), ":", "-", 1) + "-"
	for _, cm := range l.Items {
		bd, _, _ := unstructured.NestedMap(cm.Object, "binaryData")
		for k, v := range bd {
			if strings.HasPrefix(k, prefix) && (s.Keyring == nil || verify(s.Keyring, decodeBinary(v), digest(image)) == nil) {
				return true, nil
			}
		}
	}
	return false, nil
}
