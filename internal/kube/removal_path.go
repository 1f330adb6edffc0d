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

// removalKey is the key of a removal's verdict: the resource, the object
// as stored (live, its status included: a transition rule may read
// oldSelf.status) and as the write would store it (target, without
// last-applied, which the dry run replaces by the stored one), the field's
// pointer and the pointers removed with it (also), hashed; without what
// changes on every write and decides nothing (managedFields,
// resourceVersion, generation). The server's answer is a function of the
// stored object, the patch those two make and the cluster's admission, so
// a verdict answers only the same write again (kubectl diff, then the
// apply; the mutating pass, then the validating one): a volume that a
// container mounts since, a field a transition rule froze since, a list
// that has another element since are asked again.
func removalKey(gvr schema.GroupVersionResource, live, target *unstructured.Unstructured, tokens []string, also [][]string) (string, error) {
	alsoPointers := make([]string, 0, len(also))
	for _, t := range also {
		alsoPointers = append(alsoPointers, pointerOf(t))
	}
	written := keyed(target)
	annotations := written.GetAnnotations()
	delete(annotations, lastAppliedAnnotation)
	written.SetAnnotations(annotations)
	raw, err := json.Marshal(struct {
		Resource string         `json:"r"`
		Live     map[string]any `json:"l"`
		Target   map[string]any `json:"t"`
		Pointer  string         `json:"p"`
		Also     []string       `json:"a"`
	}{gvr.String(), keyed(live).Object, written.Object, pointerOf(tokens), alsoPointers})
	if err != nil {
		return "", fmt.Errorf("%w: encoding the key of %s: %w", ErrNoRemovalProof, pointerOf(tokens), err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), nil
}

// keyed is a copy of obj without the metadata that changes on every write.
func keyed(obj *unstructured.Unstructured) *unstructured.Unstructured {
	c := obj.DeepCopy()
	c.SetManagedFields(nil)
	c.SetResourceVersion("")
	c.SetGeneration(0)
	return c
}
