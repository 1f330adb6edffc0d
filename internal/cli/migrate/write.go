package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// lastAppliedPointer is the JSON pointer to the last-applied annotation.
var lastAppliedPointer = merge.AnnotationPointer(merge.LastAppliedAnnotation)

// maxWriteAttempts is how many times an upgrade refused because the
// object changed since it was read is planned and sent again, as kubectl
// apply --server-side's own upgrade tries (its maxPatchRetry).
const maxWriteAttempts = 5

// migrateFresh plans and performs the migration of t (nil when there is
// nothing to migrate). An upgrade refused because the object changed
// since it was read (a controller's status update while a Deployment
// rolls) is planned again from a new read and sent again, up to
// maxWriteAttempts times; an object saved with kubectl get -o yaml (-f)
// is written only as saved.
func (m migrator) migrateFresh(ctx context.Context, c *Cluster, t target) (*migration, error) {
	for attempt := 1; ; attempt++ {
		mg, err := m.plan(t.obj, t.gvr)
		if err != nil || mg == nil {
			return mg, err
		}
		m.migrate(ctx, mg)
		if !mg.conflict || t.saved || attempt == maxWriteAttempts {
			return mg, nil
		}
		obj, err := c.read(ctx, t.gvr, t.obj.GetNamespace() != "", t.obj.GetNamespace(), t.obj.GetName())
		if err != nil {
			return mg, nil // the conflict it reports stands
		}
		t.obj = obj
	}
}

// migrate performs the migration of mg and records its outcome. Each
// write is guarded by the resourceVersion of the object it was computed
// from: nothing is written over a change made in between.
func (m migrator) migrate(ctx context.Context, mg *migration) {
	if len(mg.Managers) == 0 {
		return
	}
	obj := mg.obj
	client := m.cluster.client(mg.gvr, obj.GetNamespace() != "", obj.GetNamespace())
	var err error
	if mg.LastApplied == "kept" && !m.dropLastApplied && !ownedByApply(obj) {
		if obj, err = withLastAppliedEntry(obj, time.Now()); err != nil {
			m.fail(mg, "upgrading managedFields", "nothing was written", err)
			return
		}
	}
	patch, err := m.upgradePatch(obj, mg)
	if err != nil {
		m.fail(mg, "upgrading managedFields", "nothing was written", err)
		return
	}
	if patch == nil {
		// Every field stays with client-side apply.
		return
	}
	if obj, err = m.patch(ctx, client, obj.GetName(), types.JSONPatchType, patch); err != nil {
		m.fail(mg, "upgrading managedFields", "nothing was written", err)
		return
	}
	mg.Upgrade = upgradeDone
	if m.dryRun {
		mg.Upgrade = upgradeDryRun
	}
	if mg.LastApplied != "kept" || !m.dropLastApplied {
		return
	}
	if _, err := m.patch(ctx, client, obj.GetName(), types.JSONPatchType, dropLastAppliedPatch(obj)); err != nil {
		mg.Error = describeWriteError(mg, "dropping last-applied", "last-applied was not dropped (the upgrade was written)", err)
		return
	}
	mg.LastApplied = "dropped"
	if m.dryRun {
		mg.LastApplied = "would be dropped"
	}
}

// withLastAppliedEntry returns a copy of obj whose managedFields also
// hold the entry that `kubectl apply --server-side` creates before its
// upgrade, by applying the annotation alone as kubectl-last-applied: an
// Apply entry that owns the annotation, so that a later server-side apply
// without it does not remove it. It goes into the upgrade's own patch
// rather than a separate apply, which admission webhooks would review as
// a server-side apply of a manifest holding nothing but the annotation.
func withLastAppliedEntry(obj *unstructured.Unstructured, now time.Time) (*unstructured.Unstructured, error) {
	fields, err := lastAppliedSet.ToJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding the last-applied field: %w", err)
	}
	out := obj.DeepCopy()
	t := metav1.NewTime(now)
	out.SetManagedFields(append(out.GetManagedFields(), metav1.ManagedFieldsEntry{
		Manager: lastAppliedManager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: obj.GetAPIVersion(),
		Time: &t, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(string(fields)),
	}))
	return out, nil
}

// patch sends one patch, as a server-side dry run with --dry-run.
func (m migrator) patch(ctx context.Context, client dynamic.ResourceInterface, name string, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	var opts metav1.PatchOptions
	if m.dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return client.Patch(ctx, name, pt, data, opts)
}

// dropLastAppliedPatch removes the annotation of obj, guarded by its
// resourceVersion the way kubectl's upgrade patch is.
func dropLastAppliedPatch(obj *unstructured.Unstructured) []byte {
	patch, _ := json.Marshal([]map[string]any{
		{"op": "replace", "path": "/metadata/resourceVersion", "value": obj.GetResourceVersion()},
		{"op": "remove", "path": lastAppliedPointer},
	})
	return patch
}

// fail records that the upgrade of mg failed in step.
func (m migrator) fail(mg *migration, step, unwritten string, err error) {
	mg.Upgrade = upgradeFailed
	mg.conflict = apierrors.IsConflict(err)
	mg.Error = describeWriteError(mg, step, unwritten, err)
}

// describeWriteError says what failed in step. A conflict says that the
// object changed since it was read and what was not written.
func describeWriteError(mg *migration, step, unwritten string, err error) string {
	if apierrors.IsConflict(err) {
		return fmt.Sprintf("%s %s changed since resourceVersion %s was read: %s; run kubectl hygiene migrate again to migrate it as it is now",
			mg.Object.Kind, cli.ObjectName(mg.Object), mg.ResourceVersion, unwritten)
	}
	err = audit.RedactError(mg.Object, err)
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return fmt.Sprintf("%s: %s", step, status.Status().Message)
	}
	return fmt.Sprintf("%s: %v", step, err)
}
