package generative_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// Between two steps only the periodic audit writes, and only to the
// objects it may fix (fix label, a namespace it writes in): there it may
// remove a person's fresh orphan, by the sequence's own record of who set
// what, and repair last-applied after an undo; anything else it changed
// is a wrong self-write. The mesh injector's stamp and an autoscaler's
// replicas are not its writes.
func TestBetweenSteps(t *testing.T) {
	la := map[string]any{"spec": map[string]any{}}
	withEnv := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "app", "image": "nginx:1", "env": []any{map[string]any{"name": "A", "value": "1"}}}}}}}}
	plain := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "app", "image": "nginx:1"}}}}}}
	stamp := map[string]any{meshStamp: "2"}
	env := []any{map[string]any{"name": "A", "value": "1"}}
	env2 := []any{map[string]any{"name": "A", "value": "2"}}
	envPath := framework.ContainersPath.Named("app").Key("env").Named("A")
	personEnv := map[string]setField{envPath.String(): {path: envPath, person: true}}
	tests := map[string]struct {
		scope     string
		undone    bool
		fields    map[string]setField
		prev, now map[string]any
		want      []string
		wrote     map[string]int
		// robots are the robots' fields the oracle knows after.
		robots []fieldPath
	}{
		"nothing changed": {prev: deploymentWith(la, env, nil, 0, nil), now: deploymentWith(la, env, nil, 0, nil)},
		"the mesh stamp": {
			prev: deploymentWith(la, env, nil, 0, nil), now: deploymentWith(la, env, stamp, 0, nil),
			robots: []fieldPath{meshPath},
		},
		"the mesh stamp on the audit's removal stays a robot's field": {
			scope: scopeFix, fields: map[string]setField{envPath.String(): {path: envPath, person: true}, meshPath.String(): {path: meshPath}},
			prev: deploymentWith(la, env, map[string]any{meshStamp: "1"}, 0, nil), now: deploymentWith(la, nil, stamp, 0, nil),
			wrote: map[string]int{"periodic audit removals": 1}, robots: []fieldPath{meshPath},
		},
		"a person's orphan removed from an object without the fix label": {
			fields: personEnv,
			prev:   deploymentWith(la, env, nil, 0, nil), now: deploymentWith(la, nil, nil, 0, nil),
			want: []string{"self-write-scope"},
		},
		"a person's orphan removed where the audit fixes": {
			scope: scopeFix, fields: personEnv,
			prev: deploymentWith(la, env, nil, 0, nil), now: deploymentWith(la, nil, nil, 0, nil),
			wrote: map[string]int{"periodic audit removals": 1},
		},
		"a person's orphan removed in a namespace labelled warn": {
			scope: scopeWarn, fields: personEnv,
			prev: deploymentWith(la, env, nil, 0, nil), now: deploymentWith(la, nil, nil, 0, nil),
			wrote: map[string]int{"periodic audit removals": 1},
		},
		"a person's orphan removed in a namespace labelled dryrun": {
			scope: scopeDryrun, fields: personEnv,
			prev: deploymentWith(la, env, nil, 0, nil), now: deploymentWith(la, nil, nil, 0, nil),
			want: []string{"self-write-scope"},
		},
		"a person's orphan removed in a namespace labelled ignore": {
			scope: scopeIgnore, fields: personEnv,
			prev: deploymentWith(la, env, nil, 0, nil), now: deploymentWith(la, nil, nil, 0, nil),
			want: []string{"self-write-scope"},
		},
		"a robot's field removed": {
			scope: scopeFix, fields: map[string]setField{envPath.String(): {path: envPath}},
			prev: deploymentWith(la, env, nil, 0, nil), now: deploymentWith(la, nil, nil, 0, nil),
			want: []string{"self-write-lost"},
		},
		"a field nobody in the sequence set removed": {
			scope: scopeFix,
			prev:  deploymentWith(la, env, nil, 0, nil), now: deploymentWith(la, nil, nil, 0, nil),
			want: []string{"self-write-lost"},
		},
		"a field an undo restored removed": {
			scope: scopeFix, fields: map[string]setField{envPath.String(): {path: envPath, person: true, undo: true}},
			prev: deploymentWith(la, env, nil, 0, nil), now: deploymentWith(la, nil, nil, 0, nil),
			want: []string{"self-write-lost"},
		},
		"a field a person applied server-side removed": {
			scope: scopeFix, fields: map[string]setField{envPath.String(): {path: envPath, person: true, applied: true}},
			prev: deploymentWith(la, env, nil, 0, nil), now: deploymentWith(la, nil, nil, 0, nil),
			want: []string{"self-write-lost"},
		},
		"a field set under kubectl apply's field manager removed": {
			scope: scopeFix, fields: map[string]setField{envPath.String(): {path: envPath, person: true, unattributed: true}},
			prev: deploymentWith(la, env, nil, 0, nil), now: deploymentWith(la, nil, nil, 0, nil),
			want: []string{"self-write-lost"},
		},
		"a kubectl edit --save-config's field, its record forgotten, removed (generative seed 281183, sequence 014)": {
			scope: scopeFix, fields: map[string]setField{envPath.String(): {path: envPath, person: true, unattributed: true, forgottenSave: true}},
			prev: deploymentWith(la, env, nil, 0, nil), now: deploymentWith(la, nil, nil, 0, nil),
			wrote: map[string]int{"periodic audit removals": 1},
		},
		"a kubectl edit --save-config's field, its record forgotten, removed while there is no last-applied": {
			scope: scopeFix, fields: map[string]setField{envPath.String(): {path: envPath, person: true, unattributed: true, forgottenSave: true}},
			prev: deploymentWith(nil, env, nil, 0, nil), now: deploymentWith(nil, nil, nil, 0, nil),
			want: []string{"self-write-lost"},
		},
		"a kubectl edit --save-config's field, its record forgotten, that last-applied has again removed": {
			scope: scopeFix, fields: map[string]setField{envPath.String(): {path: envPath, person: true, unattributed: true, forgottenSave: true}},
			prev: deploymentWith(withEnv, env, nil, 0, nil), now: deploymentWith(withEnv, nil, nil, 0, nil),
			want: []string{"self-write-lost"},
		},
		"a person's field that last-applied has removed": {
			scope: scopeFix, fields: personEnv,
			prev: deploymentWith(withEnv, env, nil, 0, nil), now: deploymentWith(withEnv, nil, nil, 0, nil),
			want: []string{"self-write-lost"},
		},
		"replicas kubectl scale set removed": {
			scope: scopeFix, fields: map[string]setField{"spec.replicas": {path: framework.ReplicasPath, person: true}},
			prev: deploymentWith(la, nil, nil, 3, nil), now: deploymentWith(la, nil, nil, 0, nil),
			want: []string{"self-write-lost"},
		},
		"a person's orphan changed, not removed": {
			scope: scopeFix, fields: personEnv,
			prev: deploymentWith(la, env, nil, 0, nil), now: deploymentWith(la, env2, nil, 0, nil),
			want: []string{"self-write-lost"},
		},
		"last-applied repaired after an undo": {
			scope: scopeFix, undone: true,
			prev: deploymentWith(plain, env, nil, 0, nil), now: deploymentWith(withEnv, env, nil, 0, nil),
			wrote: map[string]int{"periodic audit repairs": 1},
		},
		"last-applied repaired with no undo": {
			scope: scopeFix,
			prev:  deploymentWith(plain, env, nil, 0, nil), now: deploymentWith(withEnv, env, nil, 0, nil),
			want: []string{"self-write-proven"}, wrote: map[string]int{"periodic audit repairs": 1},
		},
		"last-applied repaired after an undo in a namespace labelled dryrun": {
			scope: scopeDryrun, undone: true,
			prev: deploymentWith(plain, env, nil, 0, nil), now: deploymentWith(withEnv, env, nil, 0, nil),
			want: []string{"self-write-scope"}, wrote: map[string]int{"periodic audit repairs": 1},
		},
		"last-applied repaired after an undo on an object without the fix label": {
			undone: true,
			prev:   deploymentWith(plain, env, nil, 0, nil), now: deploymentWith(withEnv, env, nil, 0, nil),
			want: []string{"self-write-scope"}, wrote: map[string]int{"periodic audit repairs": 1},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{t: t, fields: map[string]setField{}, wrote: map[string]int{}, last: tc.prev, scope: tc.scope, undone: tc.undone}
			for k, f := range tc.fields {
				r.fields[k] = f
			}
			r.betweenSteps(0, tc.now)
			got := r.failedChecks()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("failed checks (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wrote, r.wrote, cmpEmpty); diff != "" {
				t.Errorf("counted writes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.robots, r.setByRobots(), cmp.Transformer("string", fieldPath.String)); diff != "" {
				t.Errorf("robots' fields after (-want +got):\n%s", diff)
			}
		})
	}
}

// cmpEmpty compares a nil map with an empty one as equal.
var cmpEmpty = cmp.FilterValues(func(a, b map[string]int) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

// The labelled scopes of the first twenty sequences run on workloads, the
// kinds the periodic audit lists (with fewer picks, a scope would fall on
// a Service or a ConfigMap and its audit checks would test nothing), and
// none on the pinned seed's known failures.
func TestScopesOnWorkloads(t *testing.T) {
	got := map[string][]int{}
	for i := range 20 {
		scope := scopeOf(i)
		if scope == "" {
			continue
		}
		got[scope] = append(got[scope], i)
		if o := picks[i%len(picks)]; !o.workload() {
			t.Errorf("sequence %d (scope %s) writes %s, which the periodic audit does not list", i, scope, o.ref())
		}
	}
	want := map[string][]int{scopeIgnore: {3}, scopeDryrun: {8}, scopeWarn: {11}, scopeFix: {1, 10, 14}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scopes by sequence (-want +got):\n%s", diff)
	}
}

// The objects the audit may fix carry the fix label in every manifest of
// their sequence; the others carry none, so the server's --object-selector
// keeps the audit off them.
func TestFixLabel(t *testing.T) {
	o := object{kind: "Deployment", name: "web", manifest: map[string]any{"metadata": map[string]any{"name": "web"}}}
	labelled := o.withFixLabel()
	want := map[string]any{"metadata": map[string]any{"name": "web", "labels": map[string]any{fixLabelKey: fixLabelValue}}}
	if diff := cmp.Diff(want, labelled.manifest); diff != "" {
		t.Errorf("labelled manifest (-want +got):\n%s", diff)
	}
	if _, ok := o.manifest["metadata"].(map[string]any)["labels"]; ok {
		t.Errorf("withFixLabel changed the corpus object's manifest: %v", o.manifest)
	}
	for scope, want := range map[string]bool{"": false, scopeFix: true, scopeWarn: true, scopeIgnore: true, scopeDryrun: true} {
		if got := carriesFixLabel(scope); got != want {
			t.Errorf("carriesFixLabel(%q) = %v, want %v", scope, got, want)
		}
		r := &runner{scope: scope}
		if got, want := r.fixable(), scope == scopeFix || scope == scopeWarn; got != want {
			t.Errorf("fixable in scope %q = %v, want %v", scope, got, want)
		}
	}
}

// The conflicts are read from the server's counter of fixes by result.
func TestAuditConflicts(t *testing.T) {
	page := `# HELP apply_hygiene_audit_fixes_total Findings the periodic audit fixed
apply_hygiene_audit_fixes_total{result="applied",rule="orphaned-field"} 7
apply_hygiene_audit_fixes_total{result="conflict",rule="orphaned-field"} 2
apply_hygiene_audit_fixes_total{result="conflict",rule="stale-last-applied"} 1
apply_hygiene_audit_fixes_total{result="error",rule="orphaned-field"} 4
`
	if got := auditConflicts(page); got != 3 {
		t.Errorf("auditConflicts = %d, want 3", got)
	}
}

// Only undos of a sequence with exemptUndo may run as bob, and about half
// of them do; every other step stays as generated.
func TestExempted(t *testing.T) {
	undoStep := step{Writer: "kubectl rollout undo", As: alice, Kind: undo, Args: []string{"rollout", "undo", "deployment/web"}}
	other := step{Writer: "kubectl rollout restart", As: alice, Kind: write, Args: []string{"rollout", "restart", "deployment/web"}}
	tests := map[string]struct {
		exemptUndo bool
		s          step
		wantBob    bool
	}{
		"an undo where the audit fixes":       {exemptUndo: true, s: undoStep, wantBob: true},
		"an undo elsewhere":                   {s: undoStep},
		"another write where the audit fixes": {exemptUndo: true, s: other},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := newGen(37964, object{kind: "Deployment", name: "web"})
			g.exemptUndo = tc.exemptUndo
			bobs := 0
			for range 100 {
				got := g.exempted(tc.s)
				if got.As != bob {
					if diff := cmp.Diff(tc.s, got); diff != "" {
						t.Fatalf("step not run as bob changed (-want +got):\n%s", diff)
					}
					continue
				}
				bobs++
				if got.Writer != tc.s.Writer+" (exempt)" || got.Kind != undo {
					t.Fatalf("exempt step = %+v", got)
				}
			}
			if tc.wantBob != (bobs > 30 && bobs < 70) || !tc.wantBob && bobs > 0 {
				t.Errorf("%d of 100 steps ran as bob (want about half: %v)", bobs, tc.wantBob)
			}
		})
	}
}

// bob's undo is drawn only where it fits (a workload with two pod
// templates, not paused) in a sequence with exemptUndo, about one step in
// eight.
func TestExemptUndoStep(t *testing.T) {
	deployment := object{kind: "Deployment", name: "web"}
	tests := map[string]struct {
		o          object
		exemptUndo bool
		templates  int
		paused     bool
		want       bool
	}{
		"a Deployment with two templates where the audit fixes": {o: deployment, exemptUndo: true, templates: 2, want: true},
		"elsewhere":     {o: deployment, templates: 2},
		"one template":  {o: deployment, exemptUndo: true, templates: 1},
		"paused":        {o: deployment, exemptUndo: true, templates: 2, paused: true},
		"a ConfigMap":   {o: object{kind: "ConfigMap", name: "c"}, exemptUndo: true, templates: 2},
		"a StatefulSet": {o: object{kind: "StatefulSet", name: "web"}, exemptUndo: true, templates: 3, want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := newGen(37964, tc.o)
			g.exemptUndo, g.templates, g.paused = tc.exemptUndo, tc.templates, tc.paused
			n := 0
			for range 400 {
				s, ok := g.exemptUndoStep()
				if !ok {
					continue
				}
				n++
				want := step{Writer: "kubectl rollout undo (exempt)", As: bob, Kind: undo, Args: []string{"rollout", "undo", tc.o.ref()}}
				if diff := cmp.Diff(want, s); diff != "" {
					t.Fatalf("step (-want +got):\n%s", diff)
				}
			}
			if got := n > 25 && n < 75; got != tc.want || !tc.want && n > 0 {
				t.Errorf("%d of 400 steps were bob's undo (want about 50: %v)", n, tc.want)
			}
		})
	}
}
