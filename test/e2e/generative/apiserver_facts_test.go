package generative_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The oracle counts a count a /scale wrote from or to 0 as unattributed
// (scaledThroughZero): the API server records no manager of it, since the
// Scale's replicas is omitempty and a count of 0 is no field of it. This
// pins that fact on the API server the tests run, not the oracle's word
// for it: kubectl scale from 2 gives spec.replicas to kubectl's scale
// entry, and kubectl scale to 0 leaves it owned by no entry and drops
// that entry, so nothing names who scaled to 0 (a person, or KEDA: soak
// seed 271126, sequence 226); kubectl scale from 0 leaves the new count
// unowned too.
func TestScaleFromZeroLeavesTheCountUnowned(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	manifest := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"apply-hygiene.io/ignore":"true"}},` +
		`"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`
	if res := k.RunWithInput(t, manifest, "create", "-f", "-"); res.ExitCode != 0 {
		t.Fatalf("kubectl create: %s", res.Stderr)
	}
	owners := func() []string { return replicasOwners(t, k) }
	for _, step := range []struct {
		replicas string
		want     []string
	}{
		{"3", []string{"kubectl/scale"}},
		{"0", nil},
		{"1", nil},
	} {
		if res := k.Run(t, "scale", "deployment/web", "--replicas="+step.replicas); res.ExitCode != 0 {
			t.Fatalf("kubectl scale --replicas=%s: %s", step.replicas, res.Stderr)
		}
		if got := owners(); !slices.Equal(got, step.want) {
			t.Errorf("after kubectl scale --replicas=%s, spec.replicas is owned by %v, want %v", step.replicas, got, step.want)
		}
		if got := scaleEntries(t, k); step.replicas == "0" && got != nil {
			t.Errorf("after kubectl scale --replicas=0, managedFields keep the scale's entries %v, want none", got)
		}
	}
}

// The oracle counts a count that a /scale leaves owned by no entry as
// unattributed (scaledUnowned). This pins how the API server gets there
// without a 0: kubectl scale to the count the object has splits the
// owner's entry (kubectl apply's) in two under one identity, the count in
// one of them; the next /scale keeps only the other, and the count it
// changes is then nobody's: no entry names the person who scaled (soak
// seed 271126, sequences 744 and 766, where an autoscaler's scale to the
// same count came before alice's kubectl scale).
func TestScaleOfAnUnownedCountRecordsNoManager(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	// Without replicas: the API server defaults the count to 1, which the
	// creating apply owns, and no scale moves a count last-applied has.
	manifest := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},` +
		`"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`
	if res := k.RunWithInput(t, manifest, "apply", "-f", "-"); res.ExitCode != 0 {
		t.Fatalf("kubectl apply: %s", res.Stderr)
	}
	for _, step := range []struct {
		replicas string
		want     []string
		entries  int
	}{
		{"1", []string{"kubectl-client-side-apply/"}, 2},
		{"2", nil, 1},
	} {
		if res := k.Run(t, "scale", "deployment/web", "--replicas="+step.replicas); res.ExitCode != 0 {
			t.Fatalf("kubectl scale --replicas=%s: %s", step.replicas, res.Stderr)
		}
		if got := replicasOwners(t, k); !slices.Equal(got, step.want) {
			t.Errorf("after kubectl scale --replicas=%s, spec.replicas is owned by %v, want %v", step.replicas, got, step.want)
		}
		applies := 0
		for _, e := range managedEntries(t, k) {
			if e.Manager == clientSideApplier {
				applies++
			}
		}
		if applies != step.entries {
			t.Errorf("after kubectl scale --replicas=%s, managedFields have %d entries of kubectl-client-side-apply, want %d", step.replicas, applies, step.entries)
		}
		if got := scaleEntries(t, k); got != nil {
			t.Errorf("after kubectl scale --replicas=%s, managedFields have the scale's entries %v, want none", step.replicas, got)
		}
	}
}

// The oracle leaves to the product what kubectl apply --server-side's
// migration alone changed (migratedOnly): a person's server-side apply
// under another field manager of a manifest without replicas, on an object
// kubectl apply applied with replicas 3, scales it to 1 and drops
// last-applied (kubectl hands client-side apply's fields to the applier
// and applies again), and then no entry owns spec.replicas (soak seed
// 271126, sequences 066 and 120). This pins those facts on the API server
// the tests run.
func TestMigrationResetsReplicasTheManifestLeavesOut(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	const (
		head = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"apply-hygiene.io/ignore":"true"}},"spec":{`
		tail = `"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`
	)
	if res := k.RunWithInput(t, head+`"replicas":3,`+tail, "apply", "-f", "-"); res.ExitCode != 0 {
		t.Fatalf("kubectl apply: %s", res.Stderr)
	}
	if res := k.RunWithInput(t, head+tail, "apply", "--server-side", "--force-conflicts", "--field-manager=platform", "-f", "-"); res.ExitCode != 0 {
		t.Fatalf("kubectl apply --server-side: %s", res.Stderr)
	}
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.replicas}"), "1")
	framework.WantLines(t, k.JSONPath(t, "deployment/web", `{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`))
	if got := replicasOwners(t, k); got != nil {
		t.Errorf("after the migration, spec.replicas is owned by %v, want no entry", got)
	}
}

// replicasOwners are the managedFields entries of deployment/web that own
// spec.replicas, as manager/subresource.
func replicasOwners(t *testing.T, k framework.Kubectl) []string {
	t.Helper()
	var out []string
	for _, e := range managedEntries(t, k) {
		spec, _ := e.FieldsV1["f:spec"].(map[string]any)
		if _, ok := spec["f:replicas"]; ok {
			out = append(out, e.Manager+"/"+e.Subresource)
		}
	}
	return out
}

// scaleEntries are the managedFields entries of deployment/web for the
// scale subresource, as manager/subresource.
func scaleEntries(t *testing.T, k framework.Kubectl) []string {
	t.Helper()
	var out []string
	for _, e := range managedEntries(t, k) {
		if e.Subresource == "scale" {
			out = append(out, e.Manager+"/"+e.Subresource)
		}
	}
	return out
}

// managedEntry is one managedFields entry, as far as these tests read it.
type managedEntry struct {
	Manager     string         `json:"manager"`
	Subresource string         `json:"subresource"`
	FieldsV1    map[string]any `json:"fieldsV1"`
}

// managedEntries are the managedFields entries of deployment/web.
func managedEntries(t *testing.T, k framework.Kubectl) []managedEntry {
	t.Helper()
	res := k.Run(t, "get", "deployment/web", "-o", "json", "--show-managed-fields")
	var obj struct {
		Metadata struct {
			ManagedFields []managedEntry `json:"managedFields"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &obj); err != nil {
		t.Fatalf("decoding kubectl get: %v\n%s", err, res.Stderr)
	}
	return obj.Metadata.ManagedFields
}

// The oracle lets an orphaned-field finding go unnamed where the API
// server gives the field back its value when it is removed
// (restoredOnRemoval): this runs that proof on the API server the tests
// run. A pull policy Always next to an image tagged latest is what the
// server defaults (soak seed 271126, sequence 212), the same policy next
// to a tagged image is not, a label is never given back, and a required
// field cannot be removed.
func TestRestoredOnRemoval(t *testing.T) {
	r := newRunner(t, object{kind: "Deployment", name: "web", manifest: map[string]any{"apiVersion": "apps/v1"}}, nil)
	policy := framework.ContainersPath.Named("web").Key("imagePullPolicy")
	label := framework.Path("metadata", "labels", "team")
	tests := map[string]struct {
		image string
		q     fieldPath
		want  bool
	}{
		"Always next to an image tagged latest": {image: "nginx:latest", q: policy, want: true},
		"Always next to an image without a tag": {image: "nginx", q: policy, want: true},
		"Always next to a tagged image":         {image: "nginx:1.27", q: policy, want: false},
		"a label":                               {image: "nginx:latest", q: label, want: false},
		"a field the server requires":           {image: "nginx:1.27", q: framework.Path("spec", "selector"), want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := decodeJSON(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"team":"a"}},`+
				`"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},`+
				`"spec":{"containers":[{"name":"web","image":"`+tc.image+`","imagePullPolicy":"Always"}]}}}}`)
			if got := r.restoredOnRemoval(0, tc.q, obj); got != tc.want {
				t.Errorf("restoredOnRemoval(%s) = %v, want %v", tc.q, got, tc.want)
			}
		})
	}
}
