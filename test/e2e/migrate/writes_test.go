package migrate_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// --dry-run sends every write as a server-side dry run: it prints what it
// would do and the object's managedFields and annotations stay as they
// were.
func TestDryRunWritesNothing(t *testing.T) {
	f := framework.New(t)
	f.Kubectl.Run(t, "apply", "-f", v1).MustSucceed(t)
	before := managedFieldsOf(t, f)

	res := f.Hygiene(t, "migrate", "--server-side", "--dry-run", "--drop-last-applied", "-n", f.Namespace)
	if res.ExitCode != 0 {
		t.Fatalf("migrate --dry-run exited %d:\n%s", res.ExitCode, res.Stderr)
	}
	// Nothing on stderr: no warning of apply-hygiene on the writes.
	framework.WantLines(t, res.Stderr)
	framework.WantLines(t, res.Stdout, migrateLines(f.Namespace, fmt.Sprintf(dryRunLine, "kubectl"),
		"  last-applied: would be dropped (dry run)",
		"1 object(s) would be upgraded (dry run: nothing was written), 0 with nothing to upgrade, 0 failed.")...)
	if diff := cmp.Diff(before, managedFieldsOf(t, f)); diff != "" {
		t.Errorf("the dry run changed deployment/web (-before +after):\n%s", diff)
	}
}

// An object saved with kubectl get -o yaml is migrated only as it was
// saved: after a kubectl label in between, the server refuses the write
// (its resourceVersion moved), migrate says so, exits 1 and nothing
// changed; migrating the object as it is now then succeeds.
func TestConcurrentChangeFailsCleanly(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", v1).MustSucceed(t)
	saved := filepath.Join(t.TempDir(), "web.yaml")
	if err := os.WriteFile(saved, []byte(k.Run(t, "get", "deployment/web", "-o", "yaml").MustSucceed(t).Stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	rv := k.JSONPath(t, "deployment/web", "{.metadata.resourceVersion}")
	k.Run(t, "label", "deployment/web", "extra=1").MustSucceed(t)
	before := managedFieldsOf(t, f)

	res := f.Hygiene(t, "migrate", "--server-side", "-f", saved)
	if res.ExitCode != 1 {
		t.Errorf("migrate of the changed object exited %d, want 1", res.ExitCode)
	}
	framework.WantLines(t, res.Stdout, migrateLines(f.Namespace, "  failed: Deployment "+f.Namespace+"/web changed since resourceVersion "+rv+
		" was read: nothing was written; run kubectl hygiene migrate again to migrate it as it is now",
		"  last-applied: kept",
		"0 object(s) upgraded, 0 with nothing to upgrade, 1 failed.")...)
	framework.WantLines(t, res.Stderr, "error: 1 object(s) could not be migrated")
	if diff := cmp.Diff(before, managedFieldsOf(t, f)); diff != "" {
		t.Errorf("the refused migration changed deployment/web (-before +after):\n%s", diff)
	}

	// The manifest names the object; the live one is migrated.
	res = f.Hygiene(t, "migrate", "--server-side", "-f", v1, "-n", f.Namespace)
	if res.ExitCode != 0 {
		t.Fatalf("migrate of the object as it is now exited %d:\n%s", res.ExitCode, res.Stderr)
	}
	// Nothing on stderr: the upgrade applies no manifest, so apply-hygiene
	// says nothing on it, not even about the label that kubectl label set
	// (a real orphan, which the next apply reports).
	framework.WantLines(t, res.Stderr)
	want := state{Team: "payments", Env: []string{"KEEP", "DEBUG"}, LastApplied: true,
		Managers: []string{"kubectl Apply", "kubectl-label Update", "kubectl-last-applied Apply"}}
	if diff := cmp.Diff(want, stateOf(t, f)); diff != "" {
		t.Errorf("deployment/web after the migration (-want +got):\n%s", diff)
	}
}

// migrateJSON is what the test reads of migrate -o json.
type migrateJSON struct {
	DryRun       bool   `json:"dryRun"`
	FieldManager string `json:"fieldManager"`
	Objects      []struct {
		Object struct {
			Kind, Namespace, Name string
		} `json:"object"`
		Managers []string `json:"managers"`
		Fields   []struct {
			Path        string `json:"path"`
			LastApplied bool   `json:"lastApplied"`
			Default     bool   `json:"default"`
		} `json:"fields"`
		Upgrade     string `json:"upgrade"`
		LastApplied string `json:"lastApplied"`
		Error       string `json:"error"`
	} `json:"objects"`
}

// Listing the namespace finds the Deployment applied client-side and not
// the one applied server-side; -o json lists every field client-side
// apply owns, defaults included; --drop-last-applied removes the
// annotation after the upgrade, and the next kubectl apply --server-side
// deletes the dropped label.
func TestDropLastAppliedJSON(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", v1).MustSucceed(t)
	other, err := os.ReadFile(v2)
	if err != nil {
		t.Fatal(err)
	}
	k.RunWithInput(t, strings.ReplaceAll(string(other), "web", "ssa-only"), "apply", "--server-side", "-f", "-").MustSucceed(t)

	res := f.Hygiene(t, "migrate", "--server-side", "--drop-last-applied", "-n", f.Namespace, "-o", "json")
	if res.ExitCode != 0 {
		t.Fatalf("migrate exited %d:\n%s", res.ExitCode, res.Stderr)
	}
	// Nothing on stderr: no warning of apply-hygiene on the writes.
	framework.WantLines(t, res.Stderr)
	var got migrateJSON
	if err := json.Unmarshal([]byte(res.Stdout), &got); err != nil {
		t.Fatalf("decoding migrate -o json: %v\n%s", err, res.Stdout)
	}
	if len(got.Objects) != 1 {
		t.Fatalf("migrate listed %d objects, want deployment/web alone:\n%s", len(got.Objects), res.Stdout)
	}
	obj := got.Objects[0]
	summary := []string{got.FieldManager, obj.Object.Kind, obj.Object.Namespace, obj.Object.Name, strings.Join(obj.Managers, ","), obj.Upgrade, obj.LastApplied, obj.Error}
	wantSummary := []string{"kubectl", "Deployment", f.Namespace, "web", "kubectl-client-side-apply", "upgraded", "dropped", ""}
	if diff := cmp.Diff(wantSummary, summary); diff != "" {
		t.Errorf("migration (-want +got):\n%s", diff)
	}
	var set []string
	defaults := 0
	for _, fl := range obj.Fields {
		switch {
		case fl.Default:
			defaults++
		case fl.LastApplied:
			set = append(set, "    "+fl.Path)
		default:
			t.Errorf("field %s is neither in last-applied nor a default", fl.Path)
		}
	}
	if diff := cmp.Diff(ownedFields, set); diff != "" {
		t.Errorf("fields from last-applied (-want +got):\n%s", diff)
	}
	if defaults != 14 {
		t.Errorf("%d defaulted fields, want 14", defaults)
	}
	want := state{Team: "payments", Env: []string{"KEEP", "DEBUG"}, Managers: []string{"kubectl Apply"}}
	if diff := cmp.Diff(want, stateOf(t, f)); diff != "" {
		t.Errorf("deployment/web after the migration (-want +got):\n%s", diff)
	}

	k.Run(t, "apply", "--server-side", "-f", v2).MustSucceed(t)
	want = state{Env: []string{"KEEP"}, Managers: []string{"kubectl Apply"}}
	if diff := cmp.Diff(want, stateOf(t, f)); diff != "" {
		t.Errorf("deployment/web after kubectl apply --server-side (-want +got):\n%s", diff)
	}
	res = f.Hygiene(t, "migrate", "--server-side", "-n", f.Namespace)
	framework.WantLines(t, res.Stdout, "No objects managed by client-side apply.")
}
