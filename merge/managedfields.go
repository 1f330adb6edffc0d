package merge

import (
	"fmt"
	"slices"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Owner is a field manager that owns a field, from metadata.managedFields.
type Owner struct {
	// Manager is the field manager's name, e.g. "kubectl-edit".
	Manager string `json:"manager"`
	// Operation is "Update" or "Apply".
	Operation string `json:"operation"`
	// Subresource is set when the write went to one, e.g. "scale".
	Subresource string `json:"subresource,omitempty"`
	// Time is when the manager last changed its fields.
	Time time.Time `json:"time,omitzero"`
	// APIVersion is the version the manager wrote in.
	APIVersion string `json:"apiVersion,omitempty"`
}

// ManagedFields is one entry of metadata.managedFields, decoded.
type ManagedFields struct {
	Owner
	// Fields is the set of fields the manager owns.
	Fields *fieldpath.Set
	// Nodes holds the members of Fields that the entry records with "."
	// (a map, struct or list element that the manager created): it owns
	// that node, not the fields under it that others set. A member
	// without "." and without children is a leaf, an atomic value whose
	// parts the manager owns whole. Nil means none.
	Nodes *fieldpath.Set
	// recreation is set for the entry of a kubectl command that created
	// the object in place of one it deleted (see isRecreation).
	recreation bool
}

// ManagedFieldsEntry is one entry of metadata.managedFields as stored,
// with its field set still undecoded.
type ManagedFieldsEntry struct {
	Owner
	// FieldsV1 is the entry's fieldsV1 as the JSON decoder left it; nil
	// when the entry has none.
	FieldsV1 map[string]any
}

// ReadManagedFields reads obj's metadata.managedFields straight from its
// unstructured content, in the order the server keeps them. It errors when
// managedFields or an entry has the wrong shape, naming what is wrong.
//
// Written by hand because unstructured.GetManagedFields converts each
// entry by reflection and encodes its fieldsV1 to JSON again (a tenth of a
// review's time in the profile), and answers malformed input with an
// empty list and a log line rather than an error.
func ReadManagedFields(obj *unstructured.Unstructured) ([]ManagedFieldsEntry, error) {
	meta, _ := obj.Object["metadata"].(map[string]any)
	raw := meta["managedFields"]
	if raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("metadata.managedFields is a %s, not a list", jsonType(raw))
	}
	out := make([]ManagedFieldsEntry, len(list))
	for i, item := range list {
		if err := readEntry(item, &out[i]); err != nil {
			return nil, fmt.Errorf("metadata.managedFields[%d]: %w", i, err)
		}
	}
	return out, nil
}

func readEntry(item any, e *ManagedFieldsEntry) error {
	m, ok := item.(map[string]any)
	if !ok {
		return fmt.Errorf("is a %s, not an object", jsonType(item))
	}
	strings := [...]struct {
		field string
		dst   *string
	}{{"manager", &e.Manager}, {"operation", &e.Operation}, {"subresource", &e.Subresource}, {"apiVersion", &e.APIVersion}}
	for _, s := range strings {
		switch v := m[s.field].(type) {
		case nil:
		case string:
			*s.dst = v
		default:
			return fmt.Errorf("%s is a %s, not a string", s.field, jsonType(v))
		}
	}
	switch v := m["time"].(type) {
	case nil:
	case string:
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return fmt.Errorf("time %q is not RFC 3339", v)
		}
		e.Time = t.UTC()
	default:
		return fmt.Errorf("time is a %s, not a string", jsonType(v))
	}
	switch v := m["fieldsV1"].(type) {
	case nil:
	case map[string]any:
		e.FieldsV1 = v
	default:
		return fmt.Errorf("fieldsV1 is a %s, not an object", jsonType(v))
	}
	return nil
}

// jsonType names the JSON type of a decoded value as merge's error
// messages do, an array being a list.
func jsonType(v any) string { return JSONType(v, "list") }

// DecodeManagedFields decodes obj's metadata.managedFields into one field
// set per manager, in the order the server keeps them.
func DecodeManagedFields(obj *unstructured.Unstructured) ([]ManagedFields, error) {
	entries, err := ReadManagedFields(obj)
	if err != nil {
		return nil, fmt.Errorf("decoding managedFields: %w", err)
	}
	out := make([]ManagedFields, len(entries))
	for i, e := range entries {
		out[i] = ManagedFields{Owner: e.Owner, Fields: &fieldpath.Set{}}
		if e.Manager == recreatorManager {
			// Read only then: the common path parses no time.
			out[i].recreation = isRecreation(e.Owner, obj.GetCreationTimestamp().Time)
		}
		if len(e.FieldsV1) == 0 {
			continue
		}
		fields, nodeSet, err := fieldSetOf(e.FieldsV1)
		if err != nil {
			return nil, fmt.Errorf("decoding managedFields[%d]: fieldsV1 of %q: %w", i, e.Manager, err)
		}
		out[i].Fields, out[i].Nodes = fields, nodeSet
	}
	return out, nil
}

// managedFieldsOnce is an object's managedFields, decoded (every entry's
// fieldsV1 into its field set) the first time a fact asks who owns a
// field, and kept for the rest of the request: most writes change nothing
// that another writer set, and then no entry is decoded at all. Every
// question (contentOwners, ownershipOf) reads every entry, so the entries
// are decoded together. It is not safe for concurrent use.
type managedFieldsOnce struct {
	obj  *unstructured.Unstructured
	done bool
	mfs  []ManagedFields
	err  error
}

// lazyManagedFields returns obj's managedFields, to decode on first use.
func lazyManagedFields(obj *unstructured.Unstructured) *managedFieldsOnce {
	return &managedFieldsOnce{obj: obj}
}

// get returns the decoded managedFields (DecodeManagedFields), decoding
// them on the first call.
func (m *managedFieldsOnce) get() ([]ManagedFields, error) {
	if !m.done {
		m.mfs, m.err = DecodeManagedFields(m.obj)
		m.done = true
	}
	return m.mfs, m.err
}

// nodes collects the paths of fieldsV1 whose entry holds "." into set
// (allocated on first use) and returns it. The keys were read by
// FieldsV1's own decoder already; one that does not parse is skipped.
func nodes(fieldsV1 map[string]any, prefix fieldpath.Path, set *fieldpath.Set) *fieldpath.Set {
	for key, v := range fieldsV1 {
		children, ok := v.(map[string]any)
		if key == "." || !ok {
			continue
		}
		pe, err := fieldpath.DeserializePathElement(key)
		if err != nil {
			continue
		}
		p := append(prefix.Copy(), pe)
		if _, node := children["."]; node {
			if set == nil {
				set = &fieldpath.Set{}
			}
			set.Insert(p)
		}
		set = nodes(children, p, set)
	}
	return set
}

// owners returns the managers owning p: those whose set holds p, a field
// under p, or an ancestor of p as an atomic leaf. Newest first.
func owners(mfs []ManagedFields, p Path) []Owner {
	return contentOwners(mfs, p, nil)
}

// contentOwners returns the managers owning what p holds: as owners, but
// an entry that holds a struct, or a map or list that is not atomic
// (granular, from the schema), as an empty leaf owns it only as it was
// when written, empty, and none of the fields put in it since (kubectl
// create owns the server's resources: {} as f:resources: {}, and a later
// kubectl set resources sets requests.cpu in it). Only an atomic value's
// leaf entry owns its parts whole. A nil granular takes every leaf entry
// as atomic, as owners does.
func contentOwners(mfs []ManagedFields, p Path, granular func(fieldpath.Path) bool) []Owner {
	var out []Owner
	for _, mf := range mfs {
		if ownsPath(mf.Fields, mf.Nodes, p, granular) {
			out = append(out, mf.Owner)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	return out
}

func ownsPath(s, nodes *fieldpath.Set, p Path, granular func(fieldpath.Path) bool) bool {
	cur := s
	for i, pe := range p {
		if cur.Members.Has(pe) {
			prefix := fieldpath.Path(p[:i+1])
			emptyLeaf := cur.WithPrefix(pe).Empty() && (nodes == nil || !nodes.Has(prefix))
			if emptyLeaf && granular != nil && granular(prefix) {
				return false // the empty value it wrote, not what p holds now
			}
			if i == len(p)-1 || emptyLeaf {
				return true
			}
		}
		cur = cur.WithPrefix(pe)
		if cur.Empty() {
			return false
		}
	}
	return !cur.Empty()
}

// LastAppliedWriters returns the field managers whose entries in obj's
// managedFields own the last-applied annotation: who wrote it. None when
// nobody does (managedFields reset or stripped) or they are unreadable.
func LastAppliedWriters(obj *unstructured.Unstructured) []string {
	return lastAppliedOwners(obj, func(ManagedFields) bool { return true })
}

// LastAppliedUpdaters returns, sorted, the field managers whose Update
// entries in obj's managedFields own the last-applied annotation: the
// managers that kubectl apply --server-side upgrades to server-side apply
// (k8s.io/client-go/util/csaupgrade). A write of the annotation made as
// one of them keeps it theirs; made as another manager, it would take the
// annotation from them, and the upgrade would then leave their fields
// behind. None when nobody does or managedFields are unreadable.
func LastAppliedUpdaters(obj *unstructured.Unstructured) []string {
	out := lastAppliedOwners(obj, func(mf ManagedFields) bool {
		return mf.Operation == string(metav1.ManagedFieldsOperationUpdate)
	})
	slices.Sort(out)
	return out
}

// OwnsOnlyLastApplied reports whether manager's entries on obj itself
// own nothing but the last-applied annotation and the hand-over record
// (HandedOverAnnotation): the entry of kubectl apply edit-last-applied or
// set-last-applied run with --field-manager, and of the record that
// apply-hygiene's mutating pass added to such a write. A tool that writes
// whole objects (Helm, a client-side applier) owns their fields too.
// False when manager has no such entry or managedFields are unreadable.
func OwnsOnlyLastApplied(obj *unstructured.Unstructured, manager string) bool {
	mfs, err := DecodeManagedFields(obj)
	if err != nil {
		return false
	}
	allowed := fieldpath.NewSet(fieldpath.Path(lastAppliedField), fieldpath.Path(recordField))
	found := false
	for _, mf := range mfs {
		if mf.Manager != manager || mf.Subresource != "" || mf.Fields == nil {
			continue
		}
		if !mf.Fields.Leaves().Difference(allowed).Empty() {
			return false
		}
		found = true
	}
	return found
}

// lastAppliedOwners returns the managers of the entries that own obj's
// last-applied annotation and that keep accepts, in managedFields' order.
func lastAppliedOwners(obj *unstructured.Unstructured, keep func(ManagedFields) bool) []string {
	if _, ok := obj.GetAnnotations()[LastAppliedAnnotation]; !ok {
		return nil
	}
	mfs, err := DecodeManagedFields(obj)
	if err != nil {
		return nil
	}
	var out []string
	for _, mf := range mfs {
		if keep(mf) && mf.Fields != nil && mf.Fields.Has(fieldpath.Path(lastAppliedField)) && !slices.Contains(out, mf.Manager) {
			out = append(out, mf.Manager)
		}
	}
	return out
}

// ownedEmpty reports whether an entry of mfs holds p as an empty leaf: the
// value was empty when that manager wrote it (kubectl create's
// f:resources: {}), so whatever p holds now was put in it later, field by
// field (see contentOwners), and p was not added whole.
func ownedEmpty(mfs []ManagedFields, p fieldpath.Path) bool {
	for _, mf := range mfs {
		if mf.Fields == nil || len(p) == 0 {
			continue
		}
		cur := mf.Fields
		for _, pe := range p[:len(p)-1] {
			cur = cur.WithPrefix(pe)
		}
		last := p[len(p)-1]
		if cur.Members.Has(last) && cur.WithPrefix(last).Empty() && (mf.Nodes == nil || !mf.Nodes.Has(p)) {
			return true
		}
	}
	return false
}
