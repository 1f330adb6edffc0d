package review

import (
	"encoding/json"
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Repair carries out repair and prune decisions on the request's object
// and returns it encoded. Each rule changes only the fields it names.
func (rv *Review) Repair(decisions []policy.Decision) ([]byte, error) {
	obj := rv.New.DeepCopy()
	for _, d := range decisions {
		var err error
		switch d.Rule {
		case policy.RuleStaleLastApplied:
			err = repairLastApplied(obj, rv.Input.Analysis)
		case policy.RuleDefaultedDependent, policy.RuleOrphanedField:
			err = removePaths(obj, d.Paths)
		case policy.RuleReplicasReset:
			err = keepReplicas(obj, rv.Old)
		default:
			err = fmt.Errorf("rule %s asked for %s, which apply-hygiene cannot carry out for it", d.Rule, d.Action)
		}
		if err != nil {
			return nil, fmt.Errorf("carrying out %s (%s): %w", d.Rule, d.Action, err)
		}
	}
	raw, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding the repaired object: %w", err)
	}
	return raw, nil
}

func repairLastApplied(obj *unstructured.Unstructured, an *merge.Analysis) error {
	if an == nil || an.Rollback == nil || an.Rollback.RepairedLastApplied == "" {
		return fmt.Errorf("no repaired last-applied to write")
	}
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[lastAppliedAnnotation] = an.Rollback.RepairedLastApplied
	obj.SetAnnotations(ann)
	return nil
}

// keepReplicas performs the hand-over of replicas that kubectl documents
// (apply edit-last-applied, then apply without them) in one request: obj,
// written by an apply whose manifest dropped spec.replicas, gets the live
// count of old back. Its new last-applied has no replicas already, so the
// next apply leaves them alone too. Only spec.replicas changes.
func keepReplicas(obj, old *unstructured.Unstructured) error {
	if old == nil {
		return fmt.Errorf("no stored object to keep spec.replicas from")
	}
	live, found, err := unstructured.NestedFieldNoCopy(old.Object, "spec", "replicas")
	if err != nil || !found || live == nil {
		return fmt.Errorf("the stored object has no spec.replicas to keep")
	}
	if err := unstructured.SetNestedField(obj.Object, runtime.DeepCopyJSONValue(live), "spec", "replicas"); err != nil {
		return fmt.Errorf("setting spec.replicas: %w", err)
	}
	return nil
}

// removePaths removes each field, one at a time: removing a list element
// shifts the indices of the ones after it.
func removePaths(obj *unstructured.Unstructured, paths []string) error {
	for _, s := range paths {
		p, err := merge.ParsePath(s)
		if err != nil {
			return fmt.Errorf("parsing path %q: %w", s, err)
		}
		ptr, ok := merge.JSONPointer(obj.Object, p)
		if !ok {
			continue // already gone
		}
		ops, err := json.Marshal([]map[string]string{{"op": "remove", "path": ptr}})
		if err != nil {
			return fmt.Errorf("encoding remove of %s: %w", s, err)
		}
		if err := applyJSONPatch(obj, ops); err != nil {
			return fmt.Errorf("removing %s: %w", s, err)
		}
	}
	return nil
}

func applyJSONPatch(obj *unstructured.Unstructured, ops []byte) error {
	patch, err := jsonpatch.DecodePatch(ops)
	if err != nil {
		return fmt.Errorf("decoding patch: %w", err)
	}
	doc, err := json.Marshal(obj.Object)
	if err != nil {
		return fmt.Errorf("encoding object: %w", err)
	}
	out, err := patch.Apply(doc)
	if err != nil {
		return fmt.Errorf("applying patch: %w", err)
	}
	return obj.UnmarshalJSON(out)
}
