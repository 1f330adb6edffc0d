package framework

// EnsureMap returns the map at keys in obj, an object decoded from JSON,
// creating what is missing.
func EnsureMap(obj map[string]any, keys ...string) map[string]any {
	cur := obj
	for _, k := range keys {
		next, ok := cur[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	return cur
}
