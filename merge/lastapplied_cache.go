package merge

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/lru"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// Parse last-applied once: an object's last-applied annotation is the same
// in old and new of most writes, in the next write to the object, and
// becomes the previous manifest of the next apply. The Analyzer keeps the
// decoded annotation and its typed value and field set (as a previous
// manifest and as a manifest) in a bounded LRU cache, keyed by the
// annotation's exact bytes and the group and kind of the object that holds
// it.
//
// Everything in an entry is shared between concurrent analyses and never
// changed: the analyses only read last-applied (they copy before they
// change: withoutLastApplied, ModifiedConfiguration, LastAppliedValue,
// storedForm, and facts hold truncated copies of values), and the exported
// ParseLastApplied still decodes a fresh object for callers that may
// change it.

// DefaultLastAppliedCacheSize is the number of parsed last-applied
// annotations an Analyzer keeps by default (WithLastAppliedCacheSize).
const DefaultLastAppliedCacheSize = 256

// maxCachedLastApplied is the largest annotation that is cached, in
// bytes: the decoded object, its typed values and field sets take about
// ten times the annotation's size, so the cache holds at most
// DefaultLastAppliedCacheSize × 16 KiB × ~10 ≈ 40 MiB, and typically (a
// 3–5 KB annotation) a tenth of that. Larger annotations are parsed on
// every use.
const maxCachedLastApplied = 16 << 10

type lastAppliedKey struct {
	raw         string
	group, kind string
}

// parsedLastApplied is one cached annotation: the decoded object (nil
// with err when it does not decode to a JSON object), and, computed on
// first use, its typed values and field sets.
type parsedLastApplied struct {
	obj *unstructured.Unstructured
	err error

	asOriginal, asManifest typedOnce
}

// typedOnce is an object derived from last-applied (itself, or as a
// manifest), its typed value and its field set, computed once.
type typedOnce struct {
	once sync.Once
	res  atomic.Pointer[typedResult]
}

type typedResult struct {
	obj map[string]any
	gvk schema.GroupVersionKind
	tv  *typed.TypedValue
	set *fieldpath.Set
	err error
}

// get returns the object that build returns, the first time, converted
// with the kind's schema as convertTyped converts a written object of its
// own kind, and its field set.
func (t *typedOnce) get(a *Analyzer, build func() map[string]any) *typedResult {
	t.once.Do(func() {
		r := &typedResult{obj: build()}
		r.gvk = kindOf([]source{{obj: r.obj}})
		r.tv, r.err = a.typed.ObjectToTyped(withKind(r.obj, r.gvk), typed.AllowDuplicates)
		if r.err == nil {
			r.set, r.err = r.tv.ToFieldSet()
		}
		t.res.Store(r)
	})
	return t.res.Load()
}

// original is the cache of last-applied as a previous manifest; nil
// without a cached parse.
func (p *parsedLastApplied) original() *typedOnce {
	if p == nil {
		return nil
	}
	return &p.asOriginal
}

// manifest is the cache of last-applied as the new manifest, without the
// last-applied annotation (withoutLastApplied); nil without a cached parse.
func (p *parsedLastApplied) manifest() *typedOnce {
	if p == nil {
		return nil
	}
	return &p.asManifest
}

// writtenLastApplied is written(obj) for last-applied (obj, after
// storedForm) with the cache of its typed value. A Secret's obj may have
// its stringData folded, and any obj that is not stored as written
// (storedAsWritten) is another object than the cached one: it is converted
// without the cache.
func (a *Analyzer) writtenLastApplied(kind string, obj map[string]any, p *parsedLastApplied) source {
	if p == nil || kind == "Secret" || !storedAsWritten(kind, p.obj.Object) {
		return written(obj)
	}
	return source{obj: p.obj.Object, cached: p.original(), build: func() map[string]any { return p.obj.Object }}
}

// writtenManifest is written(withoutLastApplied(obj)) for the manifest
// obj, with the cache of its typed value when obj is a cached last-applied
// (p) stored as written (see writtenLastApplied); the source's obj is
// then shared.
func (a *Analyzer) writtenManifest(kind string, obj map[string]any, p *parsedLastApplied) source {
	if p == nil || kind == "Secret" || !storedAsWritten(kind, p.obj.Object) {
		return written(withoutLastApplied(obj))
	}
	t := p.manifest()
	build := func() map[string]any { return withoutLastApplied(p.obj.Object) }
	return source{obj: t.get(a, build).obj, cached: t, build: build}
}

// fieldSet returns tv's field set, from the cache t when tv is its typed
// value.
func (a *Analyzer) fieldSet(tv *typed.TypedValue, t *typedOnce) (*fieldpath.Set, error) {
	if t != nil {
		if r := t.res.Load(); r != nil && r.err == nil && r.tv == tv {
			return r.set, nil
		}
	}
	s, err := tv.ToFieldSet()
	if err != nil {
		return nil, fmt.Errorf("computing field set: %w", err)
	}
	return s, nil
}

// sets returns the field sets of tvs; caches, by index, may hold some.
func (a *Analyzer) sets(tvs []*typed.TypedValue, caches ...*typedOnce) ([]*fieldpath.Set, error) {
	out := make([]*fieldpath.Set, len(tvs))
	for i, tv := range tvs {
		var t *typedOnce
		if i < len(caches) {
			t = caches[i]
		}
		s, err := a.fieldSet(tv, t)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// lastAppliedCache is the Analyzer's cache; nil disables it.
type lastAppliedCache struct {
	lru *lru.Cache
}

func newLastAppliedCache(size int) *lastAppliedCache {
	if size <= 0 {
		return nil
	}
	return &lastAppliedCache{lru: lru.New(size)}
}

// decode returns the decoded annotation raw of obj, from the cache when it
// is there. The entry is shared: never change it.
func (c *lastAppliedCache) decode(obj *unstructured.Unstructured, raw string) *parsedLastApplied {
	if c == nil || len(raw) > maxCachedLastApplied {
		return decodeLastApplied(raw)
	}
	gvk := obj.GroupVersionKind()
	key := lastAppliedKey{raw: raw, group: gvk.Group, kind: gvk.Kind}
	if v, ok := c.lru.Get(key); ok {
		return v.(*parsedLastApplied)
	}
	p := decodeLastApplied(raw)
	c.lru.Add(key, p)
	return p
}

// decodeLastApplied decodes an annotation as ParseLastApplied does.
func decodeLastApplied(raw string) *parsedLastApplied {
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return &parsedLastApplied{err: fmt.Errorf("%w: decoding last-applied: %w", ErrInvalidLastApplied, &faultError{FaultNotAnObject, err})}
	}
	if m == nil {
		return &parsedLastApplied{err: ErrMissingLastApplied}
	}
	return &parsedLastApplied{obj: &unstructured.Unstructured{Object: m}}
}

// parseLastApplied is ParseLastApplied through the cache: the object it
// returns, and the entry, are shared and must not be changed.
func (a *Analyzer) parseLastApplied(obj *unstructured.Unstructured) (*unstructured.Unstructured, *parsedLastApplied, error) {
	raw, ok := obj.GetAnnotations()[LastAppliedAnnotation]
	if !ok || raw == "" {
		return nil, nil, ErrMissingLastApplied
	}
	p := a.lastApplied.decode(obj, raw)
	if p.err != nil {
		return nil, nil, p.err
	}
	if err := sameObject(obj, p.obj); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalidLastApplied, err)
	}
	return p.obj, p, nil
}
