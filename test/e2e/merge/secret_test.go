package merge_test

import (
	"encoding/base64"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// storedSecret returns obj as the API server stores it: a Secret's
// stringData folded into data, base64 encoded, over the keys that data
// has. kubectl's patch result (and merge's prediction) still carries
// stringData; a stored Secret never does. Other kinds are returned as
// they are. obj is changed in place.
func storedSecret(obj *unstructured.Unstructured) *unstructured.Unstructured {
	sd, ok := obj.Object["stringData"].(map[string]any)
	if obj.GetKind() != "Secret" || obj.GetAPIVersion() != "v1" || !ok {
		return obj
	}
	data, _ := obj.Object["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	for k, v := range sd {
		if s, ok := v.(string); ok {
			data[k] = base64.StdEncoding.EncodeToString([]byte(s))
		}
	}
	obj.Object["data"] = data
	delete(obj.Object, "stringData")
	return obj
}
