package review

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// stampedBesideLastApplied reports whether a mutating webhook, not the
// writer, changed annotation k from old to new, as onlyLastAppliedChanged
// asks (and nothing else): annotationStamped, or a write that left k's
// owners as they were but for its own entry's time
// (merge.OwnersKeptButTheWriters) and whose new last-applied does not hold
// k's new value (it lacks k or has another value). The API server gives
// the writer's entry the write's time when the write changes any field
// of it, so once kubectl rollout undo (manager kubectl) copied a mesh
// injector's stamp from the revision, kubectl apply set-last-applied,
// under the same manager, seems to change the stamp that the injector
// re-stamps after the fields were tracked. Every writer that changes
// last-applied and an annotation records that annotation's value there
// (kubectl apply its manifest, which sets the value or, without it,
// removes the annotation; edit and replace --save-config the object they
// send), so a value last-applied does not hold is not the writer's. A
// hand edit of both (kubectl edit, curl) that records another value is
// taken for a hand-over: a missed finding, never a false one.
func stampedBesideLastApplied(old, new *unstructured.Unstructured, k string) bool {
	if annotationStamped(old, new, k) {
		return true
	}
	v, ok := new.GetAnnotations()[k]
	if !ok || recordsAnnotation(lastApplied(new), k, v) {
		return false
	}
	p, err := merge.ParsePath("metadata.annotations[" + k + "]")
	if err != nil {
		return false
	}
	kept, err := merge.OwnersKeptButTheWriters(old, new, p)
	return err == nil && kept
}

// recordsAnnotation reports whether last-applied la holds annotation k
// with value v; true when la is empty or unreadable, so that nothing is
// taken for a webhook's without a record that says otherwise.
func recordsAnnotation(la, k, v string) bool {
	var saved struct {
		Metadata struct {
			Annotations map[string]any `json:"annotations"`
		} `json:"metadata"`
	}
	if la == "" || json.Unmarshal([]byte(la), &saved) != nil {
		return true
	}
	recorded, ok := saved.Metadata.Annotations[k]
	if !ok {
		return false
	}
	s, isString := recorded.(string)
	return !isString || s == v
}
