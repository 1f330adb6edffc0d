package remedyoracle

import (
	"encoding/json"
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Repair returns new, encoded, with the decisions carried out as the rule
// switch carried them out: stale-last-applied wrote an's repaired
// last-applied, orphaned-field and defaulted-dependent removed their
// paths one at a time, replicas-reset copied old's spec.replicas.
func Repair(old, new *unstructured.Unstructured, an *merge.Analysis, decisions []policy.Decision) ([]byte, error) {
	obj := new.DeepCopy()
	for _, d := range decisions {
		var err error
		switch d.Rule {
		case policy.RuleStaleLastApplied:
			err = repairLastApplied(obj, an)
		case policy.RuleDefaultedDependent, policy.RuleOrphanedField:
			err = removePaths(obj, d.Paths)
		case policy.RuleReplicasReset:
			err = keepReplicas(obj, old)
		default:
			err = fmt.Errorf("rule %s asked for %s, which apply-hygiene cannot carry out for it", d.Rule, d.Action)
		}
		if err != nil {
			return nil, fmt.Errorf("carrying out %s (%s): %w", d.Rule, d.Action, err)
		}
	}
	return json.Marshal(obj.Object)
}

func repairLastApplied(obj *unstructured.Unstructured, an *merge.Analysis) error {
	if an == nil || an.Rollback == nil || an.Rollback.RepairedLastApplied == "" {
		return fmt.Errorf("no repaired last-applied to write")
	}
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[merge.LastAppliedAnnotation] = an.Rollback.RepairedLastApplied
	obj.SetAnnotations(ann)
	return nil
}

func keepReplicas(obj, old *unstructured.Unstructured) error {
	if old == nil {
		return fmt.Errorf("no stored object to keep spec.replicas from")
	}
	live, found, err := unstructured.NestedFieldNoCopy(old.Object, "spec", "replicas")
	if err != nil || !found || live == nil {
		return fmt.Errorf("the stored object has no spec.replicas to keep")
	}
	return unstructured.SetNestedField(obj.Object, runtime.DeepCopyJSONValue(live), "spec", "replicas")
}

// removePaths removes each field one at a time, finding its pointer again
// after each removal (removing a list element shifts the ones after it).
func removePaths(obj *unstructured.Unstructured, paths []string) error {
	for _, s := range paths {
		p, err := merge.ParsePath(s)
		if err != nil {
			return fmt.Errorf("parsing path %q: %w", s, err)
		}
		ptr, ok := merge.JSONPointer(obj.Object, p)
		if !ok {
			continue
		}
		ops, err := json.Marshal([]map[string]string{{"op": "remove", "path": ptr}})
		if err != nil {
			return fmt.Errorf("encoding remove of %s: %w", s, err)
		}
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
			return fmt.Errorf("removing %s: %w", s, err)
		}
		if err := obj.UnmarshalJSON(out); err != nil {
			return fmt.Errorf("decoding object: %w", err)
		}
	}
	return nil
}
