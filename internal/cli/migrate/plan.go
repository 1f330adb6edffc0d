package migrate

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// Upgrade states of a migration.
const (
	upgradeDone    = "upgraded"
	upgradeDryRun  = "would upgrade"
	upgradeNone    = "nothing to upgrade"
	upgradeFailed  = "failed"
	lastAppliedOff = "absent"
)

// lastAppliedManager is the manager that `kubectl apply --server-side`
// applies the last-applied annotation with, so that a server-side apply
// without it does not remove it.
const lastAppliedManager = "kubectl-last-applied"

// lastAppliedSet is the last-applied annotation as a field set.
var lastAppliedSet = fieldpath.NewSet(fieldpath.MakePathOrDie("metadata", "annotations", merge.LastAppliedAnnotation))

// migration is the plan for one object and what became of it.
type migration struct {
	// Object is the object migrated.
	Object merge.ObjectRef `json:"object"`
	// ResourceVersion is the version read; every write is guarded by it.
	ResourceVersion string `json:"resourceVersion"`
	// Managers are the client-side apply managers (Update entries) whose
	// fields move to the server-side apply manager: the ones that wrote
	// the last-applied annotation, as kubectl finds them, and
	// kubectl-client-side-apply.
	Managers []string `json:"managers"`
	// Fields are the fields those managers own: a server-side apply that
	// drops them from its manifest leaves them behind unless the
	// managedFields are upgraded. The upgrade moves those last-applied
	// has and the server's defaults; the others stay.
	Fields []strandedField `json:"fields"`
	// Upgrade is "upgraded", "would upgrade" (dry run), "nothing to
	// upgrade" or "failed".
	Upgrade string `json:"upgrade"`
	// LastApplied is what became of the annotation: "kept", "dropped",
	// "would be dropped" (dry run) or "absent".
	LastApplied string `json:"lastApplied"`
	// Error says why the migration failed.
	Error string `json:"error,omitempty"`

	obj *unstructured.Unstructured
	gvr schema.GroupVersionResource
	// conflict: the upgrade was refused because the object changed
	// since it was read.
	conflict bool
}

// strandedField is one field that client-side apply owns.
type strandedField struct {
	// Path is the field in kubectl's notation.
	Path merge.Path `json:"path"`
	// LastApplied is set when last-applied has the field: the manifest
	// set it.
	LastApplied bool `json:"lastApplied"`
	// Default is set when last-applied does not have the field and its
	// value is the server's default (merge.IsServerDefault): a manifest
	// that leaves it out gets the default again.
	Default bool `json:"default"`
	// Stays is set when the field is neither: no manifest is known to
	// have set it (spec.replicas after the hand-over to an autoscaler), so
	// it stays with client-side apply, whose Update entry keeps it, rather
	// than move to a manager whose next apply would delete it.
	Stays bool `json:"stays"`
}

// migrator plans and writes the migrations.
type migrator struct {
	cluster         *Cluster
	analyzer        *merge.Analyzer
	manager         string
	dryRun          bool
	dropLastApplied bool
}

// plan returns the migration of obj, or nil when client-side apply never
// managed it (no client-side apply manager and no last-applied).
func (m migrator) plan(obj *unstructured.Unstructured, gvr schema.GroupVersionResource) (*migration, error) {
	managers := clientSideManagers(obj.GetManagedFields())
	_, hasLastApplied := obj.GetAnnotations()[merge.LastAppliedAnnotation]
	if len(managers) == 0 && !hasLastApplied {
		return nil, nil
	}
	mg := &migration{Object: merge.RefOf(obj), ResourceVersion: obj.GetResourceVersion(), Managers: managers,
		Fields: []strandedField{}, Upgrade: upgradeNone, LastApplied: "kept", obj: obj, gvr: gvr}
	if !hasLastApplied {
		mg.LastApplied = lastAppliedOff
	}
	if len(managers) == 0 {
		return mg, nil
	}
	fields, err := m.strandedFields(obj, managers)
	if err != nil {
		return nil, fmt.Errorf("reading the fields of %s %s: %w", mg.Object.Kind, cli.ObjectName(mg.Object), err)
	}
	mg.Fields = fields
	return mg, nil
}

// clientSideManagers returns the Update managers of the main resource
// that own the last-applied annotation (those kubectl upgrades) and
// kubectl-client-side-apply, sorted.
func clientSideManagers(entries []metav1.ManagedFieldsEntry) []string {
	names := sets.New[string]()
	for _, e := range csaupgrade.FindFieldsOwners(entries, metav1.ManagedFieldsOperationUpdate, lastAppliedSet) {
		if e.Subresource == "" {
			names.Insert(e.Manager)
		}
	}
	for _, e := range entries {
		if e.Manager == merge.ClientSideApplyManager && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" {
			names.Insert(e.Manager)
		}
	}
	return sets.List(names)
}

// strandedFields lists the fields of obj that the managers own, from
// merge's explanation of the object.
func (m migrator) strandedFields(obj *unstructured.Unstructured, managers []string) ([]strandedField, error) {
	ex, err := m.analyzer.Explain(obj)
	if err != nil {
		return nil, err
	}
	out := []strandedField{}
	for _, f := range ex.Fields {
		if slices.ContainsFunc(f.Owners, func(o merge.Owner) bool {
			return o.Operation == string(metav1.ManagedFieldsOperationUpdate) && o.Subresource == "" && slices.Contains(managers, o.Manager)
		}) {
			def := !f.LastApplied && merge.IsServerDefault(obj.Object, f.Path)
			out = append(out, strandedField{Path: f.Path, LastApplied: f.LastApplied, Default: def, Stays: !f.LastApplied && !def})
		}
	}
	return out, nil
}

// ownedByApply reports whether an Apply manager owns the last-applied
// annotation of obj.
func ownedByApply(obj *unstructured.Unstructured) bool {
	return len(csaupgrade.FindFieldsOwners(obj.GetManagedFields(), metav1.ManagedFieldsOperationApply, lastAppliedSet)) > 0
}
