package generative_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// deploymentWith is a Deployment with last-applied la, container app's
// env, the annotations and replicas (0 for none), and managedFields.
func deploymentWith(la map[string]any, env []any, annotations map[string]any, replicas int, managed []any) map[string]any {
	raw, _ := json.Marshal(la)
	meta := map[string]any{"name": "web", "annotations": map[string]any{lastAppliedKey: string(raw)}, "managedFields": managed}
	for k, v := range annotations {
		meta["annotations"].(map[string]any)[k] = v
	}
	container := map[string]any{"name": "app", "image": "nginx:1"}
	if env != nil {
		container["env"] = env
	}
	spec := map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{container}}}}
	if replicas > 0 {
		spec["replicas"] = float64(replicas)
	}
	return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": spec}
}

// The oracle of apply-hygiene's own writes, judged from the sequence:
// audit --fix removes only a person's orphans and only where it writes,
// migrate changes no value and gives the server-side manager no field
// set outside apply that last-applied lacks, a repair of last-applied
// follows an undo and writes only the template's live values.
func TestJudgeSelfWrite(t *testing.T) {
	manifest := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "app", "image": "nginx:1"}}}}}}
	undone := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "app", "image": "nginx:1", "env": []any{map[string]any{"name": "A", "value": "1"}}}}}}}}
	env := []any{map[string]any{"name": "A", "value": "1"}}
	envPath := framework.ContainersPath.Named("app").Key("env").Named("A")
	reloader := framework.Path("metadata", "annotations").Key("reloader.stakater.com/last-reloaded-from")
	applyReplicas := []any{map[string]any{"manager": "kubectl", "operation": "Apply",
		"fieldsV1": map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}}}}}
	tests := map[string]struct {
		args          []string
		scope         string
		undone        bool
		fields        map[string]setField
		before, after map[string]any
		want          []string
		// robots are the robots' fields the oracle knows after.
		robots []string
	}{
		"audit --fix removes a person's orphan": {
			args:   []string{"hygiene", "audit", "--fix=apply"},
			fields: map[string]setField{envPath.String(): {path: envPath, person: true}},
			before: deploymentWith(manifest, env, nil, 0, nil), after: deploymentWith(manifest, nil, nil, 0, nil),
		},
		"the mesh stamp on audit --fix's removal stays a robot's field (soak seed 271126, sequence 024)": {
			args:   []string{"hygiene", "audit", "--fix=apply"},
			fields: map[string]setField{envPath.String(): {path: envPath, person: true}, meshPath.String(): {path: meshPath}},
			before: deploymentWith(manifest, env, map[string]any{meshStamp: "1"}, 0, nil),
			after:  deploymentWith(manifest, nil, map[string]any{meshStamp: "2"}, 0, nil),
			robots: []string{meshPath.String()},
		},
		"audit --fix removes a person's orphan in a namespace labelled ignore": {
			args: []string{"hygiene", "audit", "--fix=apply"}, scope: scopeIgnore,
			fields: map[string]setField{envPath.String(): {path: envPath, person: true}},
			before: deploymentWith(manifest, env, nil, 0, nil), after: deploymentWith(manifest, nil, nil, 0, nil),
			want: []string{"self-write-scope"},
		},
		"audit --fix removes a robot's annotation": {
			args:   []string{"hygiene", "audit", "--fix=apply"},
			fields: map[string]setField{reloader.String(): {path: reloader}},
			before: deploymentWith(manifest, nil, map[string]any{"reloader.stakater.com/last-reloaded-from": "c"}, 0, nil),
			after:  deploymentWith(manifest, nil, nil, 0, nil),
			want:   []string{"self-write-lost"},
		},
		"audit --fix removes a field last-applied has": {
			args:   []string{"hygiene", "audit", "--fix=apply"},
			fields: map[string]setField{envPath.String(): {path: envPath, person: true}},
			before: deploymentWith(undone, env, nil, 0, nil), after: deploymentWith(undone, nil, nil, 0, nil),
			want: []string{"self-write-lost"},
		},
		"audit --fix repairs last-applied after an undo": {
			args: []string{"hygiene", "audit", "--fix=apply"}, undone: true,
			before: deploymentWith(manifest, env, nil, 0, nil), after: deploymentWith(undone, env, nil, 0, nil),
		},
		"audit --fix repairs last-applied with no undo": {
			args:   []string{"hygiene", "audit", "--fix=apply"},
			before: deploymentWith(manifest, env, nil, 0, nil), after: deploymentWith(undone, env, nil, 0, nil),
			want: []string{"self-write-proven"},
		},
		"migrate moves ownership only": {
			args:   []string{"hygiene", "migrate", "--server-side"},
			before: deploymentWith(manifest, nil, nil, 3, nil), after: deploymentWith(manifest, nil, nil, 3, nil),
		},
		"migrate gives replicas that kubectl scale set to the server-side manager": {
			args:   []string{"hygiene", "migrate", "--server-side"},
			fields: map[string]setField{"spec.replicas": {path: framework.ReplicasPath, person: true}},
			before: deploymentWith(manifest, nil, nil, 3, nil), after: deploymentWith(manifest, nil, nil, 3, applyReplicas),
			want: []string{"self-write-proven"},
		},
		"migrate drops a value": {
			args:   []string{"hygiene", "migrate", "--server-side"},
			before: deploymentWith(manifest, env, nil, 0, nil), after: deploymentWith(manifest, nil, nil, 0, nil),
			want: []string{"self-write-lost"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{t: t, fields: map[string]setField{}, wrote: map[string]int{}, scope: tc.scope, undone: tc.undone}
			for k, f := range tc.fields {
				r.fields[k] = f
			}
			s := step{As: admin, Kind: hygiene, Args: tc.args}
			r.judgeSelfWrite(0, s, framework.Result{}, tc.before, tc.after)
			got := r.failedChecks()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("failed checks (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.robots, strs(r.setByRobots())); diff != "" {
				t.Errorf("robots' fields after (-want +got):\n%s", diff)
			}
		})
	}
}

// A script runs apply-hygiene's commands as its admin, the plugin's name
// first (kubectl runs a plugin only so), and grants the admin no role.
func TestScriptOfSelfWriters(t *testing.T) {
	steps := []step{
		{Writer: auditFixApply, As: admin, Kind: hygiene, Args: []string{"hygiene", "audit", "--fix=apply"}},
		{Writer: migrate, As: admin, Kind: hygiene, Args: []string{"hygiene", "migrate", "--server-side"}},
	}
	want := []string{
		"set -x",
		"kubectl create namespace demo",
		"",
		"# 1. kubectl hygiene audit --fix=apply, as admin",
		"kubectl hygiene audit --fix=apply -n demo",
		"",
		"# 2. kubectl hygiene migrate --server-side, as admin",
		"kubectl hygiene migrate --server-side -n demo",
		"",
	}
	if diff := cmp.Diff(want, strings.Split(script(steps), "\n")); diff != "" {
		t.Errorf("script (-want +got):\n%s", diff)
	}
}
