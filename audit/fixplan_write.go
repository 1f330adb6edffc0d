package audit

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// FixFieldManager is the field manager of the periodic audit's fixes.
const FixFieldManager = "apply-hygiene-audit"

// ErrChanged says that a fix's test operations failed: the object is not
// as the audit read it, and nothing was written to it.
var ErrChanged = errors.New("it changed since the audit read it; nothing was written to it. Run the audit again to see it as it is now")

// ErrGone says that the object of a fix no longer exists.
var ErrGone = errors.New("it no longer exists")

// Fixer writes ObjectFixes: each object's guarded JSON patch, which the
// API server refuses when the object changed since the scan.
type Fixer struct {
	client       dynamic.Interface
	mapper       meta.RESTMapper
	fieldManager string
}

// NewFixer returns a Fixer that patches with client, finds each object's
// resource with mapper and writes as fieldManager (FixFieldManager for
// the periodic audit).
func NewFixer(client dynamic.Interface, mapper meta.RESTMapper, fieldManager string) *Fixer {
	return &Fixer{client: client, mapper: mapper, fieldManager: fieldManager}
}

// Manager is the field manager that writes of: its own (FieldManager)
// unless the fix names another.
func (fx *Fixer) Manager(of *ObjectFix) string { return cmp.Or(of.FieldManager(), fx.fieldManager) }

// Write patches the object: ErrChanged when its tests fail, ErrGone when
// it was deleted.
func (fx *Fixer) Write(ctx context.Context, of *ObjectFix) error {
	patch, err := of.Patch()
	if err != nil {
		return err
	}
	ri, err := fx.resource(of.Object)
	if err != nil {
		return err
	}
	_, err = ri.Patch(ctx, of.Object.Name, types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: fx.Manager(of)})
	switch {
	case apierrors.IsNotFound(err):
		return ErrGone
	case patchRefused(err):
		return ErrChanged
	case err != nil:
		return fmt.Errorf("patching: %w", err)
	}
	return nil
}

// Preview reads the object and returns it as it is and as the fix would
// leave it, writing nothing: ErrChanged when the patch's tests fail on it.
func (fx *Fixer) Preview(ctx context.Context, of *ObjectFix) (live, fixed *unstructured.Unstructured, err error) {
	patch, err := of.Patch()
	if err != nil {
		return nil, nil, err
	}
	ri, err := fx.resource(of.Object)
	if err != nil {
		return nil, nil, err
	}
	live, err = ri.Get(ctx, of.Object.Name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("reading it: %w", err)
	}
	fixed, err = applyPatch(live, patch)
	if err != nil {
		return nil, nil, err
	}
	return live, fixed, nil
}

// patchRefused reports whether the API server could not apply a JSON
// patch to the object (a test failed, a path is gone): a 422 without the
// causes that a validation error lists.
func patchRefused(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d == nil || len(d.Causes) == 0
}

// applyPatch applies a JSON patch to a copy of obj; ErrChanged when its
// tests fail.
func applyPatch(obj *unstructured.Unstructured, patch []byte) (*unstructured.Unstructured, error) {
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, fmt.Errorf("decoding the patch: %w", err)
	}
	doc, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding the object: %w", err)
	}
	patched, err := p.Apply(doc)
	if err != nil {
		return nil, ErrChanged
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(patched); err != nil {
		return nil, fmt.Errorf("decoding the fixed object: %w", err)
	}
	return out, nil
}

// resource is the client of the object's resource.
func (fx *Fixer) resource(ref merge.ObjectRef) (dynamic.ResourceInterface, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("parsing apiVersion %q: %w", ref.APIVersion, err)
	}
	mapping, err := fx.mapper.RESTMapping(gv.WithKind(ref.Kind).GroupKind(), gv.Version)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", ref.Kind, err)
	}
	if ref.Namespace == "" {
		return fx.client.Resource(mapping.Resource), nil
	}
	return fx.client.Resource(mapping.Resource).Namespace(ref.Namespace), nil
}
