package merge

import (
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ApplyManifest recomputes `kubectl apply` of manifest onto live: the
// previous manifest comes from live's last-applied annotation (none when it
// is missing). It returns an error wrapping ErrInvalidLastApplied when the
// annotation is not usable.
func (a *Analyzer) ApplyManifest(manifest, live *unstructured.Unstructured) (*ApplyResult, error) {
	var original []byte
	if _, _, err := a.parseLastApplied(live); err == nil {
		original = []byte(live.GetAnnotations()[LastAppliedAnnotation])
	} else if !errors.Is(err, ErrMissingLastApplied) {
		return nil, err
	}
	modified, err := ModifiedConfiguration(manifest)
	if err != nil {
		return nil, err
	}
	current, err := json.Marshal(live.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding live object: %w", err)
	}
	return a.Apply(original, modified, current)
}
