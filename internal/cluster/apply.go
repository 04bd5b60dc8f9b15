package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// Action says what an apply did to one object.
type Action string

// Actions, as kubectl prints them.
const (
	Created    Action = "created"
	Configured Action = "configured"
	Unchanged  Action = "unchanged"
	// Patched: a merge patch was sent (an InstallPlan approved); SHA256 is the patch's.
	Patched Action = "patched"
)

// Applied is the record of one applied object: what, what happened, and the SHA-256 of the exact
// JSON sent (so the evidence report can prove what was applied).
type Applied struct {
	Ref
	Action Action `json:"action"`
	SHA256 string `json:"sha256,omitempty"`
	// Source is the file the object came from, when known.
	Source string `json:"source,omitempty"`
}

// ApplyResult lists every object applied, in order.
type ApplyResult struct {
	Objects []Applied `json:"objects"`
}

// Changed counts objects that were created or configured.
func (r ApplyResult) Changed() int {
	n := 0
	for _, o := range r.Objects {
		if o.Action != Unchanged {
			n++
		}
	}
	return n
}

// Progress receives one line about what a long call is doing. It must be cheap and safe to call
// from many goroutines; nil means no reports.
type Progress func(msg string)

func (p Progress) say(format string, a ...any) {
	if p != nil {
		p(fmt.Sprintf(format, a...))
	}
}

// Apply server-side applies each object in order under FieldManager, forcing ownership of the
// fields it sets (bootstrap is the declared owner of what it applies). Whether an object changed is
// read from the server: an apply of equal content leaves resourceVersion as it was.
// sources, when non-nil, names the file of each object for the result.
func (c *Client) Apply(ctx context.Context, objs []*unstructured.Unstructured, sources []string, progress Progress) (ApplyResult, error) {
	var res ApplyResult
	for i, u := range objs {
		a, err := c.applyOne(ctx, u)
		if err != nil {
			return res, err
		}
		if sources != nil && i < len(sources) {
			a.Source = sources[i]
		}
		res.Objects = append(res.Objects, a)
		if c.changed != nil {
			c.changed(a)
		}
		progress.say("%s %s", a.Ref, a.Action)
	}
	return res, nil
}

func (c *Client) applyOne(ctx context.Context, u *unstructured.Unstructured) (Applied, error) {
	ref := RefOf(u)
	ri, err := c.resource(ctx, ref.APIVersion, ref.Kind, ref.Namespace)
	if err != nil {
		return Applied{}, fmt.Errorf("apply %s: %w", ref, err)
	}
	obj := u.DeepCopy()
	// Fields the server owns must not be sent in an apply configuration.
	unstructured.RemoveNestedField(obj.Object, "metadata", "resourceVersion")
	unstructured.RemoveNestedField(obj.Object, "metadata", "managedFields")
	unstructured.RemoveNestedField(obj.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(obj.Object, "metadata", "uid")
	data, err := obj.MarshalJSON()
	if err != nil {
		return Applied{}, fmt.Errorf("apply %s: encode: %w", ref, err)
	}
	sum := sha256.Sum256(data)
	before := ""
	if cur, err := ri.Get(ctx, ref.Name, metav1.GetOptions{}); err == nil {
		before = cur.GetResourceVersion()
	} else if !apierrors.IsNotFound(err) {
		return Applied{}, fmt.Errorf("apply %s: read: %w", ref, err)
	}
	if before != "" && bare(obj) {
		// An apply that sets no field owns nothing; the server would only rewrite managedFields.
		return Applied{Ref: ref, Action: Unchanged, SHA256: hex.EncodeToString(sum[:])}, nil
	}
	force := true
	out, err := ri.Patch(ctx, ref.Name, types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: FieldManager, Force: &force})
	if err != nil {
		return Applied{}, fmt.Errorf("apply %s: %w", ref, err)
	}
	a := Applied{Ref: ref, SHA256: hex.EncodeToString(sum[:])}
	if ref.Kind == "Secret" {
		// A hash of a secret is a fingerprint of its value: it stays out of results and journals.
		a.SHA256 = ""
	}
	switch {
	case before == "":
		a.Action = Created
	case out.GetResourceVersion() == before:
		a.Action = Unchanged
	default:
		a.Action = Configured
	}
	return a, nil
}

// bare reports whether an object sets nothing but its identity (a plain Namespace).
func bare(u *unstructured.Unstructured) bool {
	for k := range u.Object {
		if k != "apiVersion" && k != "kind" && k != "metadata" {
			return false
		}
	}
	md, _ := u.Object["metadata"].(map[string]any)
	for k := range md {
		if k != "name" && k != "namespace" {
			return false
		}
	}
	return true
}
