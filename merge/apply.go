package merge

import (
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// Strategy is the kind of patch that kubectl apply sends.
type Strategy string

const (
	// StrategicMergePatch is used for kinds with a Go type: lists merge by
	// their patchMergeKey, as the type's patchStrategy tags say.
	StrategicMergePatch Strategy = "strategicMergePatch"
	// JSONMergePatch (RFC 7386) is used for kinds without a Go type, such as
	// custom resources: every list is replaced whole.
	JSONMergePatch Strategy = "jsonMergePatch"
)

// ApplyResult is what client-side apply sends and what it leads to.
type ApplyResult struct {
	// Strategy is the patch type kubectl chose.
	Strategy Strategy `json:"strategy"`
	// Patch is the patch kubectl sends; "{}" when nothing changes.
	Patch json.RawMessage `json:"patch"`
	// Result is the live object after the patch, before server defaulting.
	Result *unstructured.Unstructured `json:"result"`
}

// Apply recomputes kubectl's client-side apply from JSON documents:
// original is the previous manifest (the last-applied annotation, nil when
// there is none), modified the new manifest as kubectl sends it (with the
// last-applied annotation set, see ModifiedConfiguration) and current the
// live object. The kind comes from current. Like kubectl, it overwrites
// changes made since the previous apply.
func (a *Analyzer) Apply(original, modified, current []byte) (*ApplyResult, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(current, &head); err != nil {
		return nil, fmt.Errorf("decoding current object: %w", err)
	}
	gvk := schema.FromAPIVersionAndKind(head.APIVersion, head.Kind)
	dataStruct, err := a.scheme.New(gvk)
	switch {
	case err == nil:
		return strategicApply(dataStruct, original, modified, current)
	case runtime.IsNotRegisteredError(err):
		return jsonMergeApply(original, modified, current)
	default:
		return nil, fmt.Errorf("getting Go type of %s: %w", gvk, err)
	}
}

func strategicApply(dataStruct runtime.Object, original, modified, current []byte) (*ApplyResult, error) {
	meta, err := strategicpatch.NewPatchMetaFromStruct(dataStruct)
	if err != nil {
		return nil, fmt.Errorf("reading patch metadata: %w", err)
	}
	patch, err := strategicpatch.CreateThreeWayMergePatch(original, modified, current, meta, true)
	if err != nil {
		return nil, fmt.Errorf("creating strategic merge patch: %w", err)
	}
	result, err := strategicpatch.StrategicMergePatch(current, patch, dataStruct)
	if err != nil {
		return nil, fmt.Errorf("applying strategic merge patch: %w", err)
	}
	return newApplyResult(StrategicMergePatch, patch, result)
}

func jsonMergeApply(original, modified, current []byte) (*ApplyResult, error) {
	preconditions := []mergepatch.PreconditionFunc{
		mergepatch.RequireKeyUnchanged("apiVersion"),
		mergepatch.RequireKeyUnchanged("kind"),
		mergepatch.RequireMetadataKeyUnchanged("name"),
	}
	patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch(original, modified, current, preconditions...)
	if err != nil {
		if mergepatch.IsPreconditionFailed(err) {
			return nil, errors.New("creating JSON merge patch: at least one of apiVersion, kind and name was changed")
		}
		return nil, fmt.Errorf("creating JSON merge patch: %w", err)
	}
	result, err := jsonpatch.MergePatch(current, patch)
	if err != nil {
		return nil, fmt.Errorf("applying JSON merge patch: %w", err)
	}
	return newApplyResult(JSONMergePatch, patch, result)
}

func newApplyResult(s Strategy, patch, result []byte) (*ApplyResult, error) {
	var obj map[string]any
	if err := json.Unmarshal(result, &obj); err != nil {
		return nil, fmt.Errorf("decoding patched object: %w", err)
	}
	if obj == nil {
		return nil, errors.New("decoding patched object: not a JSON object")
	}
	return &ApplyResult{Strategy: s, Patch: patch, Result: &unstructured.Unstructured{Object: obj}}, nil
}

// ModifiedConfiguration returns manifest as kubectl apply sends it: with
// the last-applied annotation set to the manifest itself (serialized
// without that annotation, with an empty annotations map when it has none,
// and with a trailing newline, byte for byte as kubectl writes it).
func ModifiedConfiguration(manifest *unstructured.Unstructured) ([]byte, error) {
	lastApplied, err := LastAppliedValue(manifest)
	if err != nil {
		return nil, err
	}
	obj := manifest.DeepCopy()
	SetLastApplied(obj, lastApplied)
	out, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding modified configuration: %w", err)
	}
	return out, nil
}

// SetLastApplied sets obj's last-applied annotation to value, in place.
func SetLastApplied(obj *unstructured.Unstructured, value string) {
	annots := obj.GetAnnotations()
	if annots == nil {
		annots = map[string]string{}
	}
	annots[LastAppliedAnnotation] = value
	obj.SetAnnotations(annots)
}

// LastAppliedValue returns the last-applied annotation value that kubectl
// apply writes for manifest.
func LastAppliedValue(manifest *unstructured.Unstructured) (string, error) {
	obj := manifest.DeepCopy()
	annots := obj.GetAnnotations()
	if annots == nil {
		annots = map[string]string{}
	}
	delete(annots, LastAppliedAnnotation)
	obj.SetAnnotations(annots)
	out, err := json.Marshal(obj.Object)
	if err != nil {
		return "", fmt.Errorf("encoding last-applied: %w", err)
	}
	return string(out) + "\n", nil
}
