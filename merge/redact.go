package merge

import (
	"encoding/json"
	"maps"
	"strings"
)

// IsSecret reports whether objects of kind hold a Secret's values: every
// printer hides them (RedactSecret), and facts carry Redacted instead.
// Any kind named Secret counts, whatever its group: hiding too much is
// safe, printing a value is not.
func IsSecret(kind string) bool { return kind == "Secret" }

// RedactSecret returns a copy of obj, a Secret's decoded JSON, whose
// data and stringData values are Redacted and whose last-applied
// annotation, which holds them too, is Redacted whole. It is the one
// redaction of every printer: the CLI's diff, explain and audit --fix
// outputs, and whatever shows an object. Objects of other kinds are
// returned as they are; obj is never modified.
func RedactSecret(obj map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	if kind, _ := obj["kind"].(string); !IsSecret(kind) {
		return obj
	}
	return redactSecretFields(obj)
}

// RedactSecretPatch is RedactSecret for a patch of a Secret, which has no
// kind: kind names the object patched.
func RedactSecretPatch(kind string, patch map[string]any) map[string]any {
	if patch == nil || !IsSecret(kind) {
		return patch
	}
	return redactSecretFields(patch)
}

func redactSecretFields(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	for _, field := range []string{"data", "stringData"} {
		if m, ok := obj[field].(map[string]any); ok {
			hidden := make(map[string]any, len(m))
			for k, v := range m {
				hidden[k] = v
				if v != nil {
					hidden[k] = Redacted
				}
			}
			out[field] = hidden
		}
	}
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return out
	}
	annots, ok := md["annotations"].(map[string]any)
	if _, has := annots[LastAppliedAnnotation]; !ok || !has {
		return out
	}
	mdCopy, annotsCopy := maps.Clone(md), maps.Clone(annots)
	annotsCopy[LastAppliedAnnotation] = Redacted
	mdCopy["annotations"] = annotsCopy
	out["metadata"] = mdCopy
	return out
}

// RedactSecretJSON is RedactSecret for a JSON document (a last-applied
// annotation, a manifest): a Secret's is returned redacted, re-encoded;
// any other document, or one that is not a JSON object, as it is, except
// that a document of kind Secret that cannot be decoded is Redacted whole.
func RedactSecretJSON(kind, doc string) string {
	if !IsSecret(kind) {
		return doc
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(doc), &obj); err != nil || obj == nil {
		return Redacted
	}
	out, err := json.Marshal(redactSecretFields(obj))
	if err != nil {
		return Redacted
	}
	return strings.TrimSpace(string(out))
}
