package generative_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The objects of a person's kubectl apply --server-side
// --force-conflicts --field-manager=platform of an object that kubectl
// apply applied with replicas 3 (soak seed 271126, sequences 066 and 120):
// kubectl's migration drops last-applied after the apply.
const (
	migrationLastApplied = `{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"app","image":"a:1","env":[{"name":"A","value":"1"}]}]}}}}`
	migrationBefore      = `{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"app","image":"a:1","env":[{"name":"A","value":"1"}]}]}}}}`
)

// A field that only kubectl's migration changed (the manifest leaves it
// out; the re-apply drops it with last-applied, and the server puts
// replicas back at 1) may be reported and need not be; a field that the
// manifest itself moves away from last-applied must be.
func TestJudgeMigratingServerSideApply(t *testing.T) {
	tests := map[string]struct {
		manifest, after string
		// laAfter is last-applied after the step ("" when the migration
		// dropped it).
		laAfter string
		want    []string
	}{
		"replicas left out, reset to 1 by the re-apply": {
			manifest: `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1","env":[{"name":"A","value":"1"}]}]}}}}`,
			after:    `{"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"app","image":"a:1","env":[{"name":"A","value":"1"}]}]}}}}`,
		},
		"an env var left out, removed by the re-apply": {
			manifest: `{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`,
			after:    `{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`,
		},
		"replicas the manifest sets to another count": {
			manifest: `{"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"app","image":"a:1","env":[{"name":"A","value":"1"}]}]}}}}`,
			after:    `{"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"app","image":"a:1","env":[{"name":"A","value":"1"}]}]}}}}`,
			want:     []string{"imperative-edit-reported expected [server-side-owned] spec.replicas"},
		},
		"an image the manifest changes": {
			manifest: `{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"app","image":"a:2","env":[{"name":"A","value":"1"}]}]}}}}`,
			after:    `{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"app","image":"a:2","env":[{"name":"A","value":"1"}]}]}}}}`,
			want:     []string{"imperative-edit-reported expected [server-side-owned] spec.template.spec.containers[name=app].image"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{t: t, fields: map[string]setField{}}
			s := ssa(alice, "platform", decodeJSON(t, tc.manifest))
			before, after := withLastApplied(t, migrationBefore, migrationLastApplied), withLastApplied(t, tc.after, tc.laAfter)
			r.judgeWrite(0, s, framework.Result{}, nil, before, after)
			var got []string
			for _, f := range r.failures {
				claim, _, _ := strings.Cut(f.detail, ":")
				got = append(got, f.check+" "+claim)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("failed checks (-want +got):\n%s", diff)
			}
		})
	}
}

// What kubectl's migration alone changed is a person's field that
// managedFields give to nobody: the next client-side apply may say it
// puts the value back and need not; what the manifest applied stays the
// person's applied field, whose revert is required.
func TestRecordMigration(t *testing.T) {
	tests := map[string]struct {
		manifest, after string
		applied, robots []string
	}{
		"replicas left out, reset to 1 by the re-apply": {
			manifest: `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1","env":[{"name":"A","value":"1"}]}]}}}}`,
			after:    `{"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"app","image":"a:1","env":[{"name":"A","value":"1"}]}]}}}}`,
			robots:   []string{"spec.replicas"},
		},
		"replicas the manifest sets to another count": {
			manifest: `{"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"app","image":"a:1","env":[{"name":"A","value":"1"}]}]}}}}`,
			after:    `{"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"app","image":"a:1","env":[{"name":"A","value":"1"}]}]}}}}`,
			applied:  []string{"spec.replicas"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{fields: map[string]setField{}}
			r.record(ssa(alice, "platform", decodeJSON(t, tc.manifest)), withLastApplied(t, migrationBefore, migrationLastApplied), decodeJSON(t, tc.after))
			if diff := cmp.Diff(tc.applied, strs(r.appliedByPeople())); diff != "" {
				t.Errorf("appliedByPeople (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.robots, strs(r.setByRobots())); diff != "" {
				t.Errorf("setByRobots (-want +got):\n%s", diff)
			}
		})
	}
}

// The objects of a person's kubectl apply --server-side
// --force-conflicts --field-manager=platform of a StatefulSet that kubectl
// replace --force --save-config re-created with minReadySeconds 4 and
// kubectl apply applied unchanged (soak seed 271126, sequence 220):
// kubectl-replace's entry keeps minReadySeconds (the apply changed
// nothing there), so kubectl's migration, which moves the fields of
// last-applied's owner (kubectl-client-side-apply), leaves it, drops
// last-applied, and no apply can remove it.
const (
	recordLastApplied = `{"spec":{"minReadySeconds":4,"serviceName":"nginx"}}`
	recordBefore      = `{"spec":{"minReadySeconds":4,"serviceName":"nginx"}}`
)

// An orphaned-field finding of a field that a --save-config write handed
// to apply through last-applied alone (kubectl replace's, kubectl edit's)
// is true once the server-side apply's migration dropped last-applied
// without removing it: allowed, not required, as at a client-side apply
// (replacedLeftOut, savedLeftOut). While last-applied stays (a client-go
// applier), the next client-side apply removes it: false.
func TestJudgeServerSideApplyRecordLeftOut(t *testing.T) {
	minReady := framework.Path("spec", "minReadySeconds")
	tests := map[string]struct {
		manifest, after string
		// laAfter is last-applied after the step ("" when the migration
		// dropped it).
		laAfter string
		// replaced is the manifest of a kubectl replace of the sequence,
		// saved edit the object after a kubectl edit --save-config that
		// set minReadySeconds (each "" for none).
		replaced, savedEdit string
		want                []string
	}{
		"a replace's field, last-applied dropped": {
			manifest: `{"spec":{"serviceName":"nginx"}}`,
			after:    recordBefore,
			replaced: recordBefore,
		},
		"a saved edit's field, last-applied dropped": {
			manifest:  `{"spec":{"serviceName":"nginx"}}`,
			after:     recordBefore,
			savedEdit: recordBefore,
		},
		"a replace's field, last-applied kept": {
			manifest: `{"spec":{"serviceName":"nginx"}}`,
			after:    recordBefore,
			laAfter:  recordLastApplied,
			replaced: recordBefore,
			want:     []string{"finding-true false warning"},
		},
		"a replace's field at another value since": {
			manifest: `{"spec":{"serviceName":"nginx"}}`,
			after:    recordBefore,
			replaced: `{"spec":{"minReadySeconds":5,"serviceName":"nginx"}}`,
			want:     []string{"finding-true false warning"},
		},
		"a replace's field in the manifest": {
			manifest: recordBefore,
			after:    recordBefore,
			replaced: recordBefore,
			want:     []string{"finding-true false warning"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{t: t, fields: map[string]setField{}}
			if tc.replaced != "" {
				r.replaced = append(r.replaced, decodeJSON(t, tc.replaced))
			}
			if tc.savedEdit != "" {
				r.savedEdits = append(r.savedEdits, savedEdit{path: minReady, after: decodeJSON(t, tc.savedEdit)})
			}
			s := ssa(alice, "platform", decodeJSON(t, tc.manifest))
			before, after := withLastApplied(t, recordBefore, recordLastApplied), withLastApplied(t, tc.after, tc.laAfter)
			got := []framework.Reported{{Finding: framework.Orphan(minReady), Line: "Warning: [orphaned-field] spec.minReadySeconds"}}
			r.judgeWrite(0, s, framework.Result{}, got, before, after)
			r.wantFailed(t, tc.want)
		})
	}
}

// kubectl apply --server-side under kubectl's default field manager, of
// an object that kubectl apply applied (migrationBefore): the API server
// rewrites last-applied to the manifest in the apply itself (and kubectl
// keeps it through the migration), so the apply moves nothing away from
// last-applied. Nothing is required, and a finding that says it edits
// what last-applied owns is false; under another manager the migration
// drops last-applied and the manifest's change must be reported
// (TestJudgeMigratingServerSideApply).
func TestJudgeServerSideApplyUnderKubectl(t *testing.T) {
	const image = `{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"app","image":"a:2","env":[{"name":"A","value":"1"}]}]}}}}`
	imagePath := framework.ContainersPath.Named("app").Key("image")
	warning := []framework.Reported{{Finding: framework.Finding{Action: framework.Warn, Rule: "imperative-edit", Path: imagePath.String()}, Line: "Warning: [imperative-edit] " + imagePath.String()}}
	tests := map[string]struct {
		args    []string
		laAfter string
		got     []framework.Reported
		want    []string
	}{
		"an image the manifest changes, last-applied rewritten": {
			args: []string{"apply", "--server-side", "-f", "-"}, laAfter: image,
		},
		"an image the manifest changes, warned as an edit": {
			args: []string{"apply", "--server-side", "-f", "-"}, laAfter: image,
			got:  warning,
			want: []string{"finding-true false warning"},
		},
		"--field-manager=kubectl is the default": {
			args: []string{"apply", "--server-side", "--field-manager=kubectl", "-f", "-"}, laAfter: image,
		},
		"another manager: the migration dropped last-applied": {
			args: []string{"apply", "--server-side", "--field-manager=platform", "-f", "-"},
			want: []string{"imperative-edit-reported miss"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{t: t, fields: map[string]setField{}}
			s := step{As: alice, Kind: serverSideApply, Args: tc.args, Stdin: image}
			before, after := withLastApplied(t, migrationBefore, migrationLastApplied), withLastApplied(t, image, tc.laAfter)
			r.judgeWrite(0, s, framework.Result{}, tc.got, before, after)
			r.wantFailed(t, tc.want)
		})
	}
}

// The objects of seed 281154's sequence 016 in short: kubectl apply set
// minReadySeconds 6, kubectl hygiene migrate --server-side moved the
// object to server-side apply (kubectl's Apply entry owns last-applied,
// no Update entry does), and alice's kubectl apply --server-side
// --force-conflicts --field-manager=platform set 8. No client-side
// applier records last-applied any more, so kubectl's migration leaves it
// as it was, and the next kubectl apply --server-side of the team fails
// on the conflict, loudly: a finding is allowed, not required. While an
// Update entry (kubectl apply's) records last-applied, it is required.
func TestJudgeServerSideApplyAfterTheMove(t *testing.T) {
	const (
		manifest = `{"spec":{"minReadySeconds":8}}`
		la       = `{"spec":{"minReadySeconds":6}}`
		owned    = `{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{"f:minReadySeconds":{}}}`
	)
	minReady := framework.Path("spec", "minReadySeconds")
	warning := []framework.Reported{{Finding: framework.Finding{Action: framework.Warn, Rule: "imperative-edit", Path: minReady.String()}, Line: "Warning: [imperative-edit] spec.minReadySeconds"}}
	tests := map[string]struct {
		manager, operation string
		got                []framework.Reported
		want               []string
	}{
		"moved: kubectl's Apply entry records last-applied, silent": {manager: "kubectl", operation: "Apply"},
		"moved: kubectl's Apply entry records last-applied, warned": {manager: "kubectl", operation: "Apply", got: warning},
		"kubectl apply's Update entry records last-applied, silent": {manager: "kubectl-client-side-apply", operation: "Update", want: []string{"imperative-edit-reported miss"}},
		"kubectl apply's Update entry records last-applied, warned": {manager: "kubectl-client-side-apply", operation: "Update", got: warning},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{t: t, fields: map[string]setField{}}
			s := ssa(alice, "platform", decodeJSON(t, manifest))
			before := withLastApplied(t, `{"spec":{"minReadySeconds":6},"metadata":{"managedFields":[{"manager":"`+tc.manager+`","operation":"`+tc.operation+`","fieldsV1":`+owned+`}]}}`, la)
			after := withLastApplied(t, manifest, la)
			r.judgeWrite(0, s, framework.Result{}, tc.got, before, after)
			r.wantFailed(t, tc.want)
		})
	}
}
