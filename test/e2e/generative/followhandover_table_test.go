package generative_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// TestOfferedHandover reads the hand-over command out of a denial as
// kubectl prints it (policy/rules/imperative_edit.rego,
// replicas_reset.rego), with the fields it names; a warning, or a command
// that names only the first of the fields, offers none a person could
// simply follow.
func TestOfferedHandover(t *testing.T) {
	const (
		object = "Deployment ns/web"
		denied = `Error from server (Forbidden): admission webhook "validate.apply-hygiene.io" denied the request: `
		edit   = `[imperative-edit] Deployment ns/web: this write by alice changes fields that last-applied owns: spec.replicas (last-applied 3, now 5)`
	)
	tests := []struct {
		name, stderr, wantCommand string
		wantPaths                 []string
	}{
		{
			name:        "kubectl scale's denial",
			stderr:      denied + edit + "; the next kubectl apply puts the last-applied values back without a word. Put the change in your manifest and run kubectl apply, or hand a field over to its new writer by deleting it from last-applied first with: kubectl hygiene handover deployments.apps/web -n ns spec.replicas",
			wantCommand: "kubectl hygiene handover deployments.apps/web -n ns spec.replicas",
			wantPaths:   []string{"spec.replicas"},
		},
		{
			name: "a label quoted for the shell, and the replicas",
			stderr: denied + `[imperative-edit] Deployment ns/web: this write by alice changes fields that last-applied owns: metadata.labels[app.kubernetes.io/name] (last-applied "web", now "api"), spec.replicas (last-applied 3, now 5); ` +
				`the next kubectl apply puts the last-applied values back without a word. Put the change in your manifest and run kubectl apply, or hand a field over to its new writer by deleting it from last-applied first with: ` +
				`kubectl hygiene handover deployments.apps/web -n ns 'metadata.labels[app.kubernetes.io/name]' spec.replicas`,
			wantCommand: `kubectl hygiene handover deployments.apps/web -n ns 'metadata.labels[app.kubernetes.io/name]' spec.replicas`,
			wantPaths:   []string{"metadata.labels[app.kubernetes.io/name]", "spec.replicas"},
		},
		{
			name: "replicas-reset's denial of an apply, whose command a clause follows",
			stderr: denied + `[replicas-reset] Deployment ns/web: the manifest drops spec.replicas, which last-applied has, so this apply resets it from 5 to 1. ` +
				`To hand replicas over to kubectl scale or an autoscaler, first delete it from last-applied with: kubectl hygiene handover deployments.apps/web -n ns spec.replicas, then apply the manifest without it.`,
			wantCommand: "kubectl hygiene handover deployments.apps/web -n ns spec.replicas",
			wantPaths:   []string{"spec.replicas"},
		},
		{
			name: "a command that names the first 5 of 8 fields",
			stderr: denied + edit + "; the next kubectl apply puts the last-applied values back without a word. If helm manages them now, hand them over to it by deleting them from last-applied with: " +
				"kubectl hygiene handover deployments.apps/web -n ns data.k1 data.k2 data.k3 data.k4 data.k5 (it names the first 5 of the 8 fields; hand the 3 others over the same way)",
		},
		{
			name:   "a warning is no denial",
			stderr: "Warning: " + edit + "; … by deleting it from last-applied first with: kubectl hygiene handover deployments.apps/web -n ns spec.replicas",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := person("scale", "deployment/web", "--replicas=5")
			got, _ := framework.ParseOutput(object, tc.stderr)
			o := offeredHandover(s, got)
			if tc.wantCommand == "" {
				if o != nil {
					t.Fatalf("offeredHandover = %+v, want none", o)
				}
				return
			}
			if o == nil {
				t.Fatal("offeredHandover = nil")
			}
			if o.command != tc.wantCommand || !slices.Equal(o.paths, tc.wantPaths) || !slices.Equal(o.denied.Args, s.Args) {
				t.Fatalf("offeredHandover = %q %q (denied %q), want %q %q (denied %q)", o.command, o.paths, o.denied.Args, tc.wantCommand, tc.wantPaths, s.Args)
			}
		})
	}
}

// TestFollowHandover holds the follower to what a person does with the
// denial: only when every field it names is one the manifest may lose,
// the hand-over, then the denied write again; the fields leave the
// manifest only when the hand-over passed, and the object gets no new pod
// template.
func TestFollowHandover(t *testing.T) {
	deployment := object{kind: "Deployment", name: "web", manifest: map[string]any{
		"metadata": map[string]any{"name": "web", "labels": map[string]any{"app.kubernetes.io/name": "web"}},
		"spec": map[string]any{"replicas": 2.0, "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}}}},
	}}
	scale := person("scale", "deployment/web", "--replicas=5")
	tests := []struct {
		name  string
		paths []string
		want  [][]string
	}{
		{"the replicas and the object's label", []string{"spec.replicas", "metadata.labels[app.kubernetes.io/name]"},
			[][]string{{"spec", "replicas"}, {"metadata", "labels", "app.kubernetes.io/name"}}},
		{"the replicas an apply already dropped", []string{"spec.replicas"}, [][]string{{"spec", "replicas"}}},
		{"an image the manifest needs", []string{"spec.replicas", "spec.template.spec.containers[name=web].image"}, nil},
		{"a pod template's label", []string{"spec.template.metadata.labels[app]"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newGen(1, deployment)
			g.exists, g.lastApplied, g.templates = true, true, 1
			if tc.name == "the replicas an apply already dropped" {
				framework.ReplicasPath.Delete(g.manifest)
			}
			if followed(t, g) {
				t.Fatal("the follower fits with no denial")
			}
			g.offer = &handoverOffer{command: "kubectl hygiene handover …", paths: tc.paths, denied: scale}
			if fits := followed(t, g); fits != (tc.want != nil) {
				t.Fatalf("fits = %v, want %v", fits, tc.want != nil)
			}
			if tc.want == nil {
				return
			}
			s := g.followHandover()
			if s.Kind != handover || s.As != alice || !slices.Equal(s.HandsOver, tc.paths) || len(g.queue) != 1 || !slices.Equal(g.queue[0].Args, scale.Args) {
				t.Fatalf("step %+v then %+v, want alice's hand-over then the denied kubectl scale", s, g.queue)
			}
			if !cmp.Equal(g.handingOver, tc.want) {
				t.Fatalf("handing over %q, want %q", g.handingOver, tc.want)
			}
			s.Writer = followHandover
			g.observe(s, false)
			if _, ok := framework.Path("metadata", "labels", "app.kubernetes.io/name").Lookup(g.manifest); !ok || g.handingOver != nil {
				t.Fatalf("a failed hand-over changed the manifest %v, or left %q pending", g.manifest, g.handingOver)
			}
			g.handingOver = tc.want
			g.observe(s, true)
			for _, p := range tc.want {
				if _, ok := framework.Path(p...).Lookup(g.manifest); ok {
					t.Fatalf("the passed hand-over left %q in the manifest", p)
				}
			}
			if g.templates != 1 {
				t.Fatalf("templates = %d after a hand-over, want 1", g.templates)
			}
		})
	}
}

// followed reports whether the follower of a denial's hand-over fits g.
func followed(t *testing.T, g *gen) bool {
	t.Helper()
	i := slices.IndexFunc(handoverWriters, func(w writer) bool { return w.name == followHandover })
	if i < 0 {
		t.Fatal("no follower of a denial's hand-over among handoverWriters")
	}
	return handoverWriters[i].fits(g)
}

// TestHandoverProblems holds kubectl hygiene handover's write to what it
// proves: last-applied loses exactly the named fields (and a map they
// leave empty), the object records the hand-over, and nothing else of the
// object changes.
func TestHandoverProblems(t *testing.T) {
	const live = `{"metadata":{"name":"web","labels":{"team":"a"}},"spec":{"replicas":5}}`
	const la = `{"metadata":{"name":"web","labels":{"team":"a"}},"spec":{"replicas":3}}`
	const scaledBack = `{"metadata":{"name":"web","labels":{"team":"a"}},"spec":{"replicas":3}}`
	tests := []struct {
		name                       string
		paths                      []string
		autoscaled                 bool
		afterLive, afterLA, record string
		want                       []string
	}{
		{"the replicas handed over", []string{"spec.replicas"}, false, live,
			`{"metadata":{"name":"web","labels":{"team":"a"}},"spec":{}}`, `["spec.replicas"]`, nil},
		{"the only label, its map with it", []string{"metadata.labels.team"}, false, live,
			`{"metadata":{"name":"web"},"spec":{"replicas":3}}`, `["metadata.labels.team","spec.replicas"]`, nil},
		{"no record", []string{"spec.replicas"}, false, live,
			`{"metadata":{"name":"web","labels":{"team":"a"}},"spec":{}}`, "", []string{"did not record the hand-over of spec.replicas (apply-hygiene.io/handed-over)"}},
		{"nothing written", []string{"spec.replicas"}, false, live, la, "",
			[]string{"left spec.replicas in last-applied", "did not record the hand-over of spec.replicas (apply-hygiene.io/handed-over)"}},
		{"a field it does not name", []string{"spec.replicas"}, false, live,
			`{"metadata":{"name":"web"},"spec":{}}`, `["spec.replicas"]`, []string{"deleted metadata.labels from last-applied, which it does not name"}},
		{"a value changed", []string{"metadata.labels.team"}, false, live,
			`{"metadata":{"name":"web"},"spec":{"replicas":4}}`, `["metadata.labels.team"]`, []string{"changed spec.replicas in last-applied"}},
		{"the live object changed", []string{"spec.replicas"}, false, scaledBack,
			`{"metadata":{"name":"web","labels":{"team":"a"}},"spec":{}}`, `["spec.replicas"]`, []string{"changed spec.replicas"}},
		{"the autoscaler's replicas in between", []string{"spec.replicas"}, true, scaledBack,
			`{"metadata":{"name":"web","labels":{"team":"a"}},"spec":{}}`, `["spec.replicas"]`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			after := withLastApplied(t, tc.afterLive, tc.afterLA)
			if tc.record != "" {
				framework.EnsureMap(after, "metadata", "annotations")[handedOverKey] = tc.record
			}
			got := handoverProblems(tc.paths, tc.autoscaled, withLastApplied(t, live, la), after)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("handoverProblems = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestHandedOverOn reads the object's record of hand-overs: a field it
// lists, one inside it, one that holds it; nothing without a record, or
// with one that does not parse.
func TestHandedOverOn(t *testing.T) {
	with := func(record string) map[string]any {
		return map[string]any{"metadata": map[string]any{"annotations": map[string]any{handedOverKey: record}}}
	}
	tests := []struct {
		name string
		obj  map[string]any
		key  string
		want bool
	}{
		{"listed", with(`["metadata.labels[gen.example.com/k-1]"]`), "metadata.labels[gen.example.com/k-1]", true},
		{"inside a listed struct", with(`["spec.template.spec.containers[name=web].resources"]`), "spec.template.spec.containers[name=web].resources.requests.cpu", true},
		{"holding a listed field", with(`["metadata.labels.team"]`), "metadata.labels", true},
		{"another field", with(`["metadata.labels.team"]`), "metadata.labels.tier", false},
		{"a key that only starts alike", with(`["metadata.labels.team"]`), "metadata.labels.teams", false},
		{"no record", map[string]any{}, "metadata.labels.team", false},
		{"a record that is no list", with(`metadata.labels.team`), "metadata.labels.team", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := handedOverOn(tc.obj, tc.key); got != tc.want {
				t.Fatalf("handedOverOn(%q) = %v, want %v", tc.key, got, tc.want)
			}
		})
	}
}

// TestLastAppliedUpdaters reads the owners of last-applied out of
// managedFields as the API server records them: Update entries only, each
// manager once, sorted; a manager that owns other fields is none.
func TestLastAppliedUpdaters(t *testing.T) {
	const owning = `{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}`
	entry := func(manager, operation, fields string) string {
		return `{"manager":"` + manager + `","operation":"` + operation + `","fieldsType":"FieldsV1","fieldsV1":` + fields + `}`
	}
	tests := []struct {
		name    string
		entries []string
		want    []string
	}{
		{"kubectl apply's", []string{entry("kubectl-client-side-apply", "Update", owning), entry("kubectl-scale", "Update", `{"f:spec":{"f:replicas":{}}}`)},
			[]string{"kubectl-client-side-apply"}},
		{"a replace --save-config of the same manifest shares it", []string{entry("kubectl-replace", "Update", owning), entry("kubectl-client-side-apply", "Update", owning)},
			[]string{"kubectl-client-side-apply", "kubectl-replace"}},
		{"a server-side apply's is no Update", []string{entry("kubectl", "Apply", owning)}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := decodeJSON(t, `{"metadata":{"managedFields":[`+strings.Join(tc.entries, ",")+`]}}`)
			if got := lastAppliedUpdaters(obj); !slices.Equal(got, tc.want) {
				t.Fatalf("lastAppliedUpdaters = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestWithAnnotationsOf keeps what a write of annotations alone made of
// the object: the new annotations, the old rest.
func TestWithAnnotationsOf(t *testing.T) {
	before := decodeJSON(t, `{"metadata":{"name":"web","annotations":{"a":"1"}},"spec":{"replicas":3}}`)
	after := decodeJSON(t, `{"metadata":{"name":"web","annotations":{"a":"2"}},"spec":{"replicas":5}}`)
	want := decodeJSON(t, `{"metadata":{"name":"web","annotations":{"a":"2"}},"spec":{"replicas":3}}`)
	if got := withAnnotationsOf(before, after); !cmp.Equal(got, want) {
		t.Fatalf("withAnnotationsOf = %v, want %v", got, want)
	}
	if v, _ := framework.Path("metadata", "annotations", "a").Lookup(before); v != "1" {
		t.Fatalf("withAnnotationsOf changed before: %v", before)
	}
}

// TestHandOverRecorded judges apply-hygiene's record of kubectl apply
// edit-last-applied's hand-over: each entry the write added must be a field
// that left last-applied and is still set; an entry beyond those is a
// wrong self-write; a write that added none has no record to justify its
// warning.
func TestHandOverRecorded(t *testing.T) {
	const (
		live = `{"metadata":{"name":"web","labels":{"team":"a","tier":"web"}},"spec":{"replicas":3}}`
		la   = `{"metadata":{"name":"web","labels":{"team":"a","tier":"web"}}}`
		less = `{"metadata":{"name":"web","labels":{"tier":"web"}}}`
	)
	tests := []struct {
		name, afterLA, was, record string
		want                       bool
		wantFailed                 []string
	}{
		{"the label taken out", less, "", `["metadata.labels.team"]`, true, nil},
		{"beside an earlier entry", less, `["spec.replicas"]`, `["metadata.labels.team","spec.replicas"]`, true, nil},
		{"a field still in last-applied", less, "", `["metadata.labels.team","metadata.labels.tier"]`, true, []string{"handover-records"}},
		{"a field never in last-applied", less, "", `["spec.replicas"]`, true, []string{"handover-records"}},
		{"no entry added", less, `["metadata.labels.team"]`, `["metadata.labels.team"]`, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &runner{t: t, fields: map[string]setField{}}
			before, after := withLastApplied(t, live, la), withLastApplied(t, live, tc.afterLA)
			if tc.was != "" {
				framework.EnsureMap(before, "metadata", "annotations")[handedOverKey] = tc.was
			}
			framework.EnsureMap(after, "metadata", "annotations")[handedOverKey] = tc.record
			if got := r.handOverRecorded(0, before, after); got != tc.want {
				t.Errorf("handOverRecorded = %v, want %v", got, tc.want)
			}
			if got := r.failedChecks(); !slices.Equal(got, tc.wantFailed) {
				t.Errorf("failed checks %q, want %q", got, tc.wantFailed)
			}
		})
	}
}
