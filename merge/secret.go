package merge

import (
	"encoding/base64"
	"sort"
)

// secretData folds a Secret manifest's stringData into data, base64
// encoded, as the API server does when it stores the Secret: live Secrets
// never have stringData. Facts compare the manifest and last-applied with
// live in that form, so a key applied through stringData is owned as
// data.<key> (not an orphan) and not drifted. data is stored as the
// server does too (storedBase64): a manifest's base64 wrapped on several
// lines is the one line the server keeps. Other kinds, and Secrets whose
// data is already as stored and that have no stringData, are returned as
// they are; obj is never modified.
func secretData(kind string, obj map[string]any) map[string]any {
	if kind != "Secret" {
		return obj
	}
	sd, hasStringData := obj["stringData"].(map[string]any)
	d, _ := obj["data"].(map[string]any)
	if !hasStringData && !restoredData(d) {
		return obj
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "stringData" {
			out[k] = v
		}
	}
	data := make(map[string]any, len(d)+len(sd))
	for k, v := range d {
		data[k] = storedBase64(v)
	}
	for k, v := range sd {
		if s, ok := v.(string); ok {
			data[k] = base64.StdEncoding.EncodeToString([]byte(s))
		}
	}
	out["data"] = data
	return out
}

// restoredData reports whether a value of data is stored otherwise than
// written (storedBase64).
func restoredData(data map[string]any) bool {
	for _, v := range data {
		if s, ok := v.(string); ok && storedBase64(s) != s {
			return true
		}
	}
	return false
}

// storedBase64 is v, a Secret's data value, as the API server stores it:
// it decodes the base64 into bytes (encoding/json's []byte, which ignores
// line breaks and padding bits that are not zero) and encodes them again.
// A value that is not base64 (the server refuses it) is v.
func storedBase64(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return v
	}
	return base64.StdEncoding.EncodeToString(b)
}

// droppedStringData returns the keys that a Secret's previous manifest
// had in stringData and the new manifest has in neither stringData nor
// data, sorted. kubectl's patch deletes stringData.<key>, which the stored
// Secret never has, so data.<key> stays: apply can never remove it.
func droppedStringData(kind string, original, manifest map[string]any) []string {
	before, ok := original["stringData"].(map[string]any)
	if kind != "Secret" || !ok {
		return nil
	}
	sd, _ := manifest["stringData"].(map[string]any)
	data, _ := manifest["data"].(map[string]any)
	var out []string
	for k := range before {
		_, inStringData := sd[k]
		_, inData := data[k]
		if !inStringData && !inData {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// stringDataOrphans lists data.<key> for each key of droppedStringData
// that the result still has, as orphans: reported at the apply that
// leaves it behind, whoever owns it. Live's managedFields are decoded
// for the first such key.
func (a *Analyzer) stringDataOrphans(in applyInput, original map[string]any) ([]FieldFact, error) {
	var out []FieldFact
	for _, k := range droppedStringData(in.kind, original, in.manifest.Object) {
		p := Path{fieldName("data"), fieldName(k)}
		if v := at(in.result.Object, p); v.ok {
			mfs, err := in.liveManaged.get()
			if err != nil {
				return nil, err
			}
			out = append(out, a.fact(in.kind, p, factValues{live: at(in.live.Object, p), result: v}, owners(mfs, p)))
		}
	}
	return out, nil
}
