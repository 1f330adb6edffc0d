package webhook

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// fromUnstructured converts a JSON-shaped map into a typed value.
func fromUnstructured(m map[string]any, into any) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, into); err != nil {
		return fmt.Errorf("converting %T: %w", into, err)
	}
	return nil
}
