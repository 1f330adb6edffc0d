package merge

import (
	"strconv"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// finder looks up paths as at does, but indexes every keyed list it
// searches, once: the analyses look up one path per changed field, and
// without an index a list of n keyed elements (10,000 env entries) costs
// n² comparisons. A finder belongs to one analysis of unchanging objects;
// it is not safe for concurrent use.
type finder struct {
	lists map[listID]*listIndex
}

// listID names a list by its first element's address (the backing array
// of a decoded JSON list never moves while the objects stay unchanged) and
// the key fields it is searched by.
type listID struct {
	first *any
	n     int
	key   string
}

type listIndex struct {
	exact map[string]int
	// incomplete holds the elements that lack a key field; only they can
	// match leniently (see findKeyed).
	incomplete []int
}

// minIndexed is the list length from which indexing pays.
const minIndexed = 32

func newFinder() *finder { return &finder{lists: map[listID]*listIndex{}} }

// at is the indexed version of the package-level at.
func (f *finder) at(obj map[string]any, p Path) presence {
	if obj == nil {
		return presence{}
	}
	var cur any = obj
	for _, pe := range p {
		if pe.Key != nil {
			l, _ := cur.([]any)
			i := f.find(l, *pe.Key)
			if i < 0 {
				return presence{}
			}
			cur = l[i]
			continue
		}
		var ok bool
		if cur, _, ok = step(cur, pe); !ok {
			return presence{}
		}
	}
	return presence{v: cur, ok: true}
}

func (f *finder) find(l []any, key value.FieldList) int {
	if len(l) < minIndexed {
		return findKeyed(l, key)
	}
	names := make([]string, len(key))
	want := make([]any, len(key))
	for i, k := range key {
		names[i], want[i] = k.Name, k.Value.Unstructured()
	}
	id := listID{first: &l[0], n: len(l), key: strings.Join(names, "\x00")}
	idx, ok := f.lists[id]
	if !ok {
		idx = indexList(l, names)
		f.lists[id] = idx
	}
	if k, ok := keyString(want); ok {
		if i, found := idx.exact[k]; found {
			return i
		}
	}
	for _, i := range idx.incomplete {
		if m, ok := l[i].(map[string]any); ok && keyMatches(m, key, want, true) {
			return i
		}
	}
	return -1
}

func indexList(l []any, names []string) *listIndex {
	idx := &listIndex{exact: make(map[string]int, len(l))}
	vals := make([]any, len(names))
	for i, item := range l {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		complete := true
		for j, n := range names {
			v, has := m[n]
			complete = complete && has
			vals[j] = v
		}
		if !complete {
			idx.incomplete = append(idx.incomplete, i)
			continue
		}
		if k, ok := keyString(vals); ok {
			if _, dup := idx.exact[k]; !dup {
				idx.exact[k] = i // the first match, as findKeyed
			}
		}
	}
	return idx
}

// keyString encodes scalar key values so that equal values (numbers by
// value, as scalarEqual) encode equally; ok is false for any other value.
func keyString(vals []any) (string, bool) {
	var b strings.Builder
	for _, v := range vals {
		switch t := v.(type) {
		case string:
			b.WriteString("s")
			b.WriteString(strconv.Itoa(len(t)))
			b.WriteString(":")
			b.WriteString(t)
		case bool:
			b.WriteString("b" + strconv.FormatBool(t))
		default:
			n, ok := number(v)
			if !ok {
				return "", false
			}
			b.WriteString("n" + strconv.FormatFloat(n, 'g', -1, 64))
		}
		b.WriteString("\x00")
	}
	return b.String(), true
}
