package merge

import (
	"encoding/base64"
	"sort"
	"strings"
)

// base64Fields names, for each kind that has one, the map whose values
// are bytes ([]byte, base64 in JSON): a Secret's data, a ConfigMap's
// binaryData.
var base64Fields = map[string]string{"Secret": "data", "ConfigMap": "binaryData"}

// storedForm is obj, a manifest or last-applied of kind, as the API server
// stores it. A Secret's stringData is folded into data, base64 encoded:
// live Secrets never have stringData, so a key applied through stringData
// is owned as data.<key> (not an orphan) and not drifted. The values of
// base64Fields are stored as the server stores them (storedBase64): a
// manifest's base64 wrapped on several lines is the one line the server
// keeps. Facts compare the manifest and last-applied with live in that
// form. obj is returned as it is when it is stored as written
// (storedAsWritten), and is never modified.
func storedForm(kind string, obj map[string]any) map[string]any {
	if storedAsWritten(kind, obj) {
		return obj
	}
	field := base64Fields[kind]
	var sd map[string]any // stringData: a Secret's only
	if kind == "Secret" {
		sd, _ = obj["stringData"].(map[string]any)
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "stringData" || kind != "Secret" {
			out[k] = v
		}
	}
	d, _ := obj[field].(map[string]any)
	data := make(map[string]any, len(d)+len(sd))
	for k, v := range d {
		data[k] = storedBase64(v)
	}
	for k, v := range sd {
		if s, ok := v.(string); ok {
			data[k] = base64.StdEncoding.EncodeToString([]byte(s))
		}
	}
	out[field] = data
	return out
}

// storedAsWritten reports whether the API server stores obj, of kind, as
// it is written (storedForm returns it as it is): it is not a Secret with
// stringData, and no value of its base64 field is stored otherwise
// (restoredData).
func storedAsWritten(kind string, obj map[string]any) bool {
	field, ok := base64Fields[kind]
	if !ok {
		return true
	}
	if _, ok := obj["stringData"].(map[string]any); ok && kind == "Secret" {
		return false
	}
	d, _ := obj[field].(map[string]any)
	return !restoredData(d)
}

// restoredData reports whether a value of data, a map of base64 values,
// is stored otherwise than written (storedBase64). Only a value that
// could be (respellable) is decoded.
func restoredData(data map[string]any) bool {
	for _, v := range data {
		if s, ok := v.(string); ok && respellable(s) && storedBase64(s) != s {
			return true
		}
	}
	return false
}

// respellable reports whether s, if it is base64, may be stored otherwise
// than written: it has a line break, or padding bits that are not zero
// (the last character before "==" carries 4 of them, before "=" 2).
// base64 without either is the encoding of its bytes, as stored.
func respellable(s string) bool {
	if strings.ContainsAny(s, "\r\n") {
		return true
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	switch {
	case strings.HasSuffix(s, "==") && len(s) >= 3:
		return strings.IndexByte(alphabet, s[len(s)-3])&0xF != 0
	case strings.HasSuffix(s, "=") && len(s) >= 2:
		return strings.IndexByte(alphabet, s[len(s)-2])&0x3 != 0
	}
	return false
}

// storedBase64 is v, a value of a Secret's data or a ConfigMap's
// binaryData, as the API server stores it: it decodes the base64 into
// bytes (encoding/json's []byte, which ignores line breaks and padding
// bits that are not zero) and encodes them again. A value that is not
// base64 (the server refuses it) is v.
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
