package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// pointerTokens splits an RFC 6901 JSON pointer into its unescaped tokens.
func pointerTokens(pointer string) ([]string, error) {
	if !strings.HasPrefix(pointer, "/") {
		return nil, fmt.Errorf("%w: %q is not a JSON pointer to a field", ErrNoRemovalProof, pointer)
	}
	tokens := strings.Split(pointer[1:], "/")
	for i, t := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return tokens, nil
}

// pointerOf is the JSON pointer of tokens.
func pointerOf(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// step is the value under token in v: a map's key or a list's index.
func step(v any, token string) (any, bool) {
	switch c := v.(type) {
	case map[string]any:
		x, ok := c[token]
		return x, ok
	case []any:
		i, err := strconv.Atoi(token)
		if err != nil || i < 0 || i >= len(c) {
			return nil, false
		}
		return c[i], true
	}
	return nil, false
}

// valueAt is the value at tokens in obj.
func valueAt(obj map[string]any, tokens []string) (any, bool) {
	var v any = obj
	for _, t := range tokens {
		var ok bool
		if v, ok = step(v, t); !ok {
			return nil, false
		}
	}
	return v, true
}

// removeAt removes the value at tokens from obj, in place; a list element
// is cut out of its list.
func removeAt(obj map[string]any, tokens []string) {
	if len(tokens) == 0 {
		return
	}
	parentTokens, last := tokens[:len(tokens)-1], tokens[len(tokens)-1]
	if len(parentTokens) == 0 {
		delete(obj, last)
		return
	}
	grand, ok := valueAt(obj, parentTokens[:len(parentTokens)-1])
	if !ok {
		return
	}
	parentKey := parentTokens[len(parentTokens)-1]
	parent, _ := step(grand, parentKey)
	switch p := parent.(type) {
	case map[string]any:
		delete(p, last)
	case []any:
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 || i >= len(p) {
			return
		}
		cut := slices.Delete(slices.Clone(p), i, i+1)
		switch g := grand.(type) {
		case map[string]any:
			g[parentKey] = cut
		case []any:
			j, _ := strconv.Atoi(parentKey)
			g[j] = cut
		}
	}
}

// volatileMetadata are the fields of metadata that change with every
// write or differ for every object; they are left out of a verdict's key.
var volatileMetadata = map[string]bool{
	"resourceVersion": true, "generation": true, "uid": true, "creationTimestamp": true,
}

// removalKey is the key of a removal's verdict: the resource, the object
// (namespace, name, labels and annotations but last-applied, which
// mutating policies select on), the pointer, the value, and the scalars
// and lists of scalars of every map on the way to the field (its
// discriminators), hashed. A verdict is kept per object and shape, never
// shared between objects.
func removalKey(gvr schema.GroupVersionResource, obj *unstructured.Unstructured, tokens []string, value any) (string, error) {
	var levels []map[string]any
	var v any = obj.Object
	for i, t := range tokens {
		if m, ok := v.(map[string]any); ok {
			levels = append(levels, scalarsOf(m, i == 1 && tokens[0] == "metadata"))
		}
		v, _ = step(v, t)
	}
	annotations := obj.GetAnnotations()
	delete(annotations, lastAppliedAnnotation)
	raw, err := json.Marshal(struct {
		Resource    string            `json:"r"`
		Namespace   string            `json:"n"`
		Name        string            `json:"o"`
		Labels      map[string]string `json:"lb"`
		Annotations map[string]string `json:"a"`
		Pointer     string            `json:"p"`
		Value       any               `json:"v"`
		Levels      []map[string]any  `json:"l"`
	}{gvr.String(), obj.GetNamespace(), obj.GetName(), obj.GetLabels(), annotations, pointerOf(tokens), value, levels})
	if err != nil {
		return "", fmt.Errorf("%w: encoding the key of %s: %w", ErrNoRemovalProof, pointerOf(tokens), err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), nil
}

// scalarsOf is the entries of m that are scalars or lists of scalars;
// without the volatile ones when m is metadata.
func scalarsOf(m map[string]any, metadata bool) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if metadata && volatileMetadata[k] {
			continue
		}
		if isScalar(v) || isScalarList(v) {
			out[k] = v
		}
	}
	return out
}

func isScalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

func isScalarList(v any) bool {
	list, ok := v.([]any)
	if !ok {
		return false
	}
	for _, e := range list {
		if !isScalar(e) {
			return false
		}
	}
	return true
}
