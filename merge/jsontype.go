package merge

// JSONType names the JSON type of a value that encoding/json or
// sigs.k8s.io/json decoded, for an error message: object, string,
// boolean, null or number, and arrayName for an array (JSON's "array",
// or "list" as Kubernetes' messages say).
func JSONType(v any, arrayName string) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return arrayName
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "number"
}
