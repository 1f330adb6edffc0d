package merge

import "encoding/base64"

// secretData folds a Secret manifest's stringData into data, base64
// encoded, as the API server does when it stores the Secret: live Secrets
// never have stringData. Facts compare the manifest and last-applied with
// live in that form, so a key applied through stringData is owned as
// data.<key> (not an orphan) and not drifted. Other kinds, and Secrets
// without stringData, are returned as they are; obj is never modified.
func secretData(kind string, obj map[string]any) map[string]any {
	sd, ok := obj["stringData"].(map[string]any)
	if kind != "Secret" || !ok {
		return obj
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "stringData" {
			out[k] = v
		}
	}
	data := map[string]any{}
	if d, ok := obj["data"].(map[string]any); ok {
		for k, v := range d {
			data[k] = v
		}
	}
	for k, v := range sd {
		if s, ok := v.(string); ok {
			data[k] = base64.StdEncoding.EncodeToString([]byte(s))
		}
	}
	out["data"] = data
	return out
}
