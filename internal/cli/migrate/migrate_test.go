package migrate

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

// liveYAML holds the live objects of the command's tests
// (cmd/kubectl-hygiene), which run migrate against them in a fake cluster.
const liveYAML = "../../../cmd/kubectl-hygiene/testdata/migrate/live.yaml"

// The managers migrated are the Update entries of the main resource that
// wrote last-applied (as kubectl finds them) and kubectl-client-side-apply.
func TestClientSideManagers(t *testing.T) {
	annotation := `{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}`
	labels := `{"f:metadata":{"f:labels":{"f:team":{}}}}`
	entry := func(manager, op, subresource, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationType(op), Subresource: subresource,
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
	}
	tests := map[string]struct {
		entries []metav1.ManagedFieldsEntry
		want    []string
	}{
		"kubectl apply": {
			entries: []metav1.ManagedFieldsEntry{entry("kubectl-client-side-apply", "Update", "", annotation), entry("kube-controller-manager", "Update", "status", `{"f:status":{}}`)},
			want:    []string{"kubectl-client-side-apply"},
		},
		"kubectl create --save-config, then kubectl apply of the same manifest": {
			entries: []metav1.ManagedFieldsEntry{entry("kubectl-create", "Update", "", annotation), entry("kubectl-client-side-apply", "Update", "", labels)},
			want:    []string{"kubectl-client-side-apply", "kubectl-create"},
		},
		"an edit that did not touch last-applied": {
			entries: []metav1.ManagedFieldsEntry{entry("kubectl-client-side-apply", "Update", "", annotation), entry("kubectl-edit", "Update", "", labels)},
			want:    []string{"kubectl-client-side-apply"},
		},
		"already server-side": {
			entries: []metav1.ManagedFieldsEntry{entry("kubectl", "Apply", "", labels), entry("kubectl-last-applied", "Apply", "", annotation)},
			want:    []string{},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, clientSideManagers(tc.entries)); diff != "" {
				t.Errorf("managers (-want +got):\n%s", diff)
			}
		})
	}
}

// The plan of a Deployment that kubectl apply created lists the fields of
// its manifest and the server's defaults, and the upgrade patch is
// kubectl's: managedFields replaced, resourceVersion as read.
func TestMigratePlan(t *testing.T) {
	objs, err := cli.ReadObjects(liveYAML, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := migrator{analyzer: merge.NewAnalyzer(), manager: "kustomize-controller"}
	mg, err := m.plan(objs[0], schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"})
	if err != nil {
		t.Fatal(err)
	}
	var fromManifest, stays []string
	defaults := 0
	for _, f := range mg.Fields {
		switch {
		case f.LastApplied:
			fromManifest = append(fromManifest, f.Path.String())
		case f.Default:
			defaults++
		case f.Stays:
			stays = append(stays, f.Path.String())
		default:
			t.Errorf("%s is neither in last-applied nor a default, and does not stay", f.Path)
		}
	}
	if len(stays) > 0 {
		t.Errorf("fields that stay with client-side apply: %v, want none", stays)
	}
	want := []string{
		"metadata.labels.app", "metadata.labels.team", "spec.replicas", "spec.selector", "spec.template.metadata.labels.app",
		"spec.template.spec.containers[name=nginx].image", "spec.template.spec.containers[name=nginx].name",
		"spec.template.spec.containers[name=nginx].env[name=DEBUG].name", "spec.template.spec.containers[name=nginx].env[name=DEBUG].value",
		"spec.template.spec.containers[name=nginx].env[name=KEEP].name", "spec.template.spec.containers[name=nginx].env[name=KEEP].value",
	}
	if diff := cmp.Diff(want, fromManifest); diff != "" {
		t.Errorf("fields from the manifest (-want +got):\n%s", diff)
	}
	if defaults != 14 {
		t.Errorf("%d defaults, want 14", defaults)
	}
	patch, err := m.upgradePatch(objs[0], mg)
	if err != nil {
		t.Fatal(err)
	}
	var ops []struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(patch, &ops); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, op := range ops {
		got = append(got, op.Op+" "+op.Path)
	}
	if diff := cmp.Diff([]string{"replace /metadata/managedFields", "replace /metadata/resourceVersion"}, got); diff != "" {
		t.Errorf("patch operations (-want +got):\n%s", diff)
	}
	if rv := string(ops[1].Value); rv != `"`+objs[0].GetResourceVersion()+`"` {
		t.Errorf("resourceVersion in the patch = %s, want %q", rv, objs[0].GetResourceVersion())
	}
	for _, want := range []string{`"manager":"kustomize-controller","operation":"Apply"`, `"f:team":{}`} {
		if !strings.Contains(string(ops[0].Value), want) {
			t.Errorf("managedFields of the patch lack %s:\n%s", want, ops[0].Value)
		}
	}
	if strings.Contains(string(ops[0].Value), "kubectl-client-side-apply") {
		t.Errorf("managedFields of the patch keep kubectl-client-side-apply:\n%s", ops[0].Value)
	}

	// Keeping last-applied adds kubectl's entry for it to the same patch.
	kept, err := withLastAppliedEntry(objs[0], time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	patch, err = m.upgradePatch(kept, mg)
	if err != nil {
		t.Fatal(err)
	}
	entry := `{"manager":"kubectl-last-applied","operation":"Apply","apiVersion":"apps/v1","time":"2026-11-23T08:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}}`
	if !strings.Contains(string(patch), entry) {
		t.Errorf("patch lacks %s:\n%s", entry, patch)
	}
	if len(objs[0].GetManagedFields()) != 2 {
		t.Errorf("withLastAppliedEntry changed the object it was given")
	}
}

// Each state of a migration prints its block; the summary counts them.
func TestMigrateText(t *testing.T) {
	web := merge.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	team := strandedField{Path: mustPath(t, "metadata.labels.team"), LastApplied: true}
	dnsPolicy := strandedField{Path: mustPath(t, "spec.template.spec.dnsPolicy"), Default: true}
	report := migrateReport{FieldManager: "kubectl", Objects: []migration{
		{Object: web, Managers: []string{"kubectl-client-side-apply"}, Fields: []strandedField{team, dnsPolicy},
			Upgrade: upgradeDone, LastApplied: "kept", Error: "dropping last-applied: boom", gvr: gvr},
		{Object: merge.ObjectRef{Kind: "DaemonSet", Namespace: "shop", Name: "agent"}, Managers: []string{}, Fields: []strandedField{},
			Upgrade: upgradeNone, LastApplied: "kept", gvr: schema.GroupVersionResource{Group: "apps", Resource: "daemonsets"}},
	}}
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := &Options{IOStreams: streams}
	if err := o.print(report); err != nil {
		t.Fatal(err)
	}
	want := `Deployment shop/web: client-side apply by kubectl-client-side-apply
  fields it owns, which a server-side apply that drops them leaves behind unless upgraded:
    metadata.labels.team
  and 1 field(s) the server defaulted (a manifest that leaves them out gets the default again; -o json lists them)
  upgraded: their fields now belong to kubectl (Apply), whose next server-side apply deletes those its manifest drops
  last-applied: kept; server-side apply does not need it: drop it with --drop-last-applied, or kubectl annotate deployment.apps/web -n shop kubectl.kubernetes.io/last-applied-configuration-
  failed: dropping last-applied: boom
DaemonSet shop/agent: no client-side apply manager left, only the last-applied annotation
  last-applied: kept; server-side apply does not need it: drop it with kubectl annotate daemonset.apps/agent -n shop kubectl.kubernetes.io/last-applied-configuration-
0 object(s) upgraded, 1 with nothing to upgrade, 1 failed.
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	if code := cli.Code(report.outcome()); code != cli.ExitFailure {
		t.Errorf("exit %d, want %d", code, cli.ExitFailure)
	}
}

func mustPath(t *testing.T, s string) merge.Path {
	t.Helper()
	p, err := merge.ParsePath(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
