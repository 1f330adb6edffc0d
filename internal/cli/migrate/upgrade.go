package migrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// movableFields are the fields of obj that a migration may give the
// server-side apply manager: those last-applied has (the manifest set
// them), those whose value is the server's default by merge's table
// (merge.IsServerDefault, checked against the API server by
// test/e2e/merge), and the last-applied annotation. Any other field a
// client-side apply manager owns — spec.replicas after the hand-over to
// an autoscaler, which ownership keeps with kubectl-client-side-apply
// until the value changes — stays with it: the new manager's next apply
// would delete it.
func movableFields(obj *unstructured.Unstructured, fields []strandedField) *fieldpath.Set {
	// A new set: Union and Insert share and change nodes of their sets.
	set := &fieldpath.Set{}
	lastAppliedSet.Iterate(func(p fieldpath.Path) { set.Insert(p.Copy()) })
	for _, f := range fields {
		if f.LastApplied || merge.IsServerDefault(obj.Object, f.Path) {
			set.Insert(f.Path.FieldPath())
		}
	}
	return set
}

// upgradedEntries returns entries with the movable fields of the
// managers' Update entries (main resource) moved into the Apply entry of
// target, created in the place of the first of them when it has none;
// the fields they keep stay in their entries, and an entry left empty
// goes. It refuses, changing nothing, when the entries to merge are of
// different apiVersions: their field sets are in different schemas, and
// kubectl's upgrade (csaupgrade) would drop the other version's fields
// without merging them.
func upgradedEntries(entries []metav1.ManagedFieldsEntry, managers []string, target string, movable *fieldpath.Set) ([]metav1.ManagedFieldsEntry, error) {
	out := slices.Clone(entries)
	targetAt := slices.IndexFunc(out, func(e metav1.ManagedFieldsEntry) bool {
		return e.Manager == target && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == ""
	})
	moved := &fieldpath.Set{}
	if targetAt >= 0 {
		s, err := entrySet(out[targetAt])
		if err != nil {
			return nil, err
		}
		moved = s
	}
	versions := map[string]bool{}
	if targetAt >= 0 {
		versions[out[targetAt].APIVersion] = true
	}
	firstAt := -1
	for i, e := range out {
		if !slices.Contains(managers, e.Manager) || e.Operation != metav1.ManagedFieldsOperationUpdate || e.Subresource != "" {
			continue
		}
		s, err := entrySet(e)
		if err != nil {
			return nil, err
		}
		move := movableMembers(s, movable)
		if move.Empty() {
			continue
		}
		versions[e.APIVersion] = true
		if firstAt < 0 {
			firstAt = i
		}
		moved = moved.Union(move)
		if err := setEntrySet(&out[i], s.Difference(move)); err != nil {
			return nil, err
		}
	}
	if len(versions) > 1 {
		return nil, fmt.Errorf("the fields to move are in managedFields entries of different apiVersions (%s), which cannot be merged without the API server's conversion; apply the object once with kubectl apply --server-side --field-manager=%s in one apiVersion, then migrate", strings.Join(sortedKeys(versions), ", "), target)
	}
	if firstAt < 0 {
		return entries, nil
	}
	if targetAt < 0 {
		first := out[firstAt]
		out = slices.Insert(out, firstAt, metav1.ManagedFieldsEntry{Manager: target, Operation: metav1.ManagedFieldsOperationApply,
			APIVersion: first.APIVersion, Time: first.Time, FieldsType: "FieldsV1"})
		targetAt = firstAt
	}
	if err := setEntrySet(&out[targetAt], moved); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(out, func(e metav1.ManagedFieldsEntry) bool {
		return e.FieldsV1 == nil || bytes.Equal(bytes.TrimSpace(e.FieldsV1.GetRawBytes()), []byte("{}"))
	}), nil
}

// movableMembers are the members of s that are movable, and the members
// on the way to one (a list element, a map), which move with it.
func movableMembers(s, movable *fieldpath.Set) *fieldpath.Set {
	ancestors := &fieldpath.Set{}
	movable.Iterate(func(p fieldpath.Path) {
		for i := 1; i < len(p); i++ {
			ancestors.Insert(p[:i])
		}
	})
	out := &fieldpath.Set{}
	s.Iterate(func(p fieldpath.Path) {
		if movable.Has(p) || ancestors.Has(p) {
			out.Insert(p)
		}
	})
	return out
}

func entrySet(e metav1.ManagedFieldsEntry) (*fieldpath.Set, error) {
	s := &fieldpath.Set{}
	if e.FieldsV1 == nil {
		return s, nil
	}
	if err := s.FromJSON(e.FieldsV1.GetRawReader()); err != nil {
		return nil, fmt.Errorf("decoding the fields of manager %s: %w", e.Manager, err)
	}
	return s, nil
}

func setEntrySet(e *metav1.ManagedFieldsEntry, s *fieldpath.Set) error {
	raw, err := s.ToJSON()
	if err != nil {
		return fmt.Errorf("encoding the fields of manager %s: %w", e.Manager, err)
	}
	e.FieldsV1 = metav1.NewFieldsV1(string(raw))
	return nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// upgradePatch is the JSON patch that moves the managers' movable fields
// to the server-side apply manager, as kubectl's upgrade does for all of
// them; it replaces metadata.resourceVersion with the one read, so that
// the server refuses it with a conflict when the object changed in
// between. It is nil when there is nothing to move.
func (m migrator) upgradePatch(obj *unstructured.Unstructured, mg *migration) ([]byte, error) {
	entries, err := upgradedEntries(obj.GetManagedFields(), mg.Managers, m.manager, movableFields(obj, mg.Fields))
	if err != nil {
		return nil, fmt.Errorf("computing the managedFields upgrade: %w", err)
	}
	if !m.moves(obj, entries) {
		return nil, nil
	}
	patch, err := json.Marshal([]map[string]any{
		{"op": "replace", "path": "/metadata/managedFields", "value": entries},
		{"op": "replace", "path": "/metadata/resourceVersion", "value": obj.GetResourceVersion()},
	})
	if err != nil {
		return nil, fmt.Errorf("encoding the managedFields upgrade: %w", err)
	}
	return patch, nil
}

// moves reports whether entries, obj's upgraded managedFields, give the
// server-side apply manager anything.
func (m migrator) moves(obj *unstructured.Unstructured, entries []metav1.ManagedFieldsEntry) bool {
	fieldsOf := func(es []metav1.ManagedFieldsEntry) string {
		for _, e := range es {
			if e.Manager == m.manager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" && e.FieldsV1 != nil {
				return e.FieldsV1.GetRawString()
			}
		}
		return ""
	}
	return fieldsOf(entries) != fieldsOf(obj.GetManagedFields())
}
