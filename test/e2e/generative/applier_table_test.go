package generative_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The objects of a person's kubectl set image under kubectl apply's name
// over an image that an exempt undo moved away from last-applied, while
// an annotation that alice's kubectl annotate set is live (soak seed
// 271126, sequence 494).
const (
	applierLastApplied = `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:2"}]}}}}`
	applierBefore      = `{"metadata":{"annotations":{"a":"v"}},"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`
	applierAfter       = `{"metadata":{"annotations":{"a":"v"}},"spec":{"template":{"spec":{"containers":[{"name":"app","image":"set:6"}]}}}}`
)

// An orphaned-field finding at a write under kubectl apply's name that
// leaves last-applied as it was is allowed, not required, where an apply
// of last-applied's manifest would report it: a person's field that
// last-applied leaves out. Under kubectl set's own name, the write is no
// apply (an edit to deny) and the finding is false; so is one of a field
// last-applied has, or one a robot set.
func TestJudgeWriteUnderAppliersName(t *testing.T) {
	annotation := framework.Path("metadata", "annotations").Key("a")
	tests := map[string]struct {
		args []string
		// la is last-applied before and after the step; robot marks an
		// annotation a robot set.
		la    string
		robot bool
		want  []string
	}{
		"a person's annotation that last-applied leaves out": {
			args: []string{"set", "image", "deployment/web", "app=set:6", "--field-manager=kubectl-client-side-apply"},
			la:   applierLastApplied,
		},
		"the same write under kubectl set's name": {
			args: []string{"set", "image", "deployment/web", "app=set:6"},
			la:   applierLastApplied,
			// An edit of a field last-applied has, which it must deny.
			want: []string{"finding-true false warning", "imperative-edit-reported miss"},
		},
		"an annotation that last-applied has": {
			args: []string{"set", "image", "deployment/web", "app=set:6", "--field-manager=kubectl-client-side-apply"},
			la:   `{"metadata":{"annotations":{"a":"v"}},"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:2"}]}}}}`,
			want: []string{"finding-true false warning"},
		},
		"an annotation a robot set": {
			args:  []string{"set", "image", "deployment/web", "app=set:6", "--field-manager=kubectl-client-side-apply"},
			la:    applierLastApplied,
			robot: true,
			want:  []string{"finding-true false warning"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{t: t, fields: map[string]setField{}}
			r.fields[annotation.String()] = setField{path: annotation, person: !tc.robot}
			before, after := withLastApplied(t, applierBefore, tc.la), withLastApplied(t, applierAfter, tc.la)
			got := []framework.Reported{{Finding: framework.Orphan(annotation), Line: "Warning: [orphaned-field] metadata.annotations[a]"}}
			r.judgeWrite(0, person(tc.args...), framework.Result{}, got, before, after)
			r.wantFailed(t, tc.want)
		})
	}
}

// wantFailed checks the runner's failed checks, each as "check counted",
// against want.
func (r *runner) wantFailed(t *testing.T, want []string) {
	t.Helper()
	var failed []string
	for _, f := range r.failures {
		failed = append(failed, f.check+" "+f.counted)
	}
	if diff := cmp.Diff(want, failed); diff != "" {
		t.Errorf("failed checks (-want +got):\n%s", diff)
	}
}

// A replicas-autoscaled warning at a write under kubectl apply's name
// that leaves last-applied as it was is allowed, not required, when
// last-applied sets replicas and kubectl autoscale's autoscaler scales the
// object: it is what an apply of last-applied's manifest reports, and its
// claim (every apply of that manifest sets the count back) holds for the
// object (generative seed 281149, sequence 010, step 16: finding 35).
// Under kubectl set's own name, or when last-applied leaves replicas out,
// the warning is false.
func TestJudgeAutoscaledUnderAppliersName(t *testing.T) {
	const (
		withReplicas = `{"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`
		// The image drifted before the write, as in the sequence.
		before  = `{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"app","image":"a:0"}]}}}}`
		after   = `{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"app","image":"set:6"}]}}}}`
		warning = "Warning: [replicas-autoscaled] StatefulSet g/web: the manifest sets spec.replicas to 2, but HorizontalPodAutoscaler web scales this StatefulSet (it wants 3 replicas now, between 2 and 3), so every apply fights the autoscaler"
	)
	tests := map[string]struct {
		args []string
		la   string
		want []string
	}{
		"under kubectl apply's name, last-applied sets replicas": {
			args: []string{"set", "image", "statefulset/web", "app=set:6", "--field-manager=kubectl-client-side-apply"},
			la:   withReplicas,
		},
		"under kubectl set's name": {
			args: []string{"set", "image", "statefulset/web", "app=set:6"},
			la:   withReplicas,
			// An edit of the image last-applied has, which it must deny.
			want: []string{"finding-true false warning", "imperative-edit-reported miss"},
		},
		"last-applied leaves replicas out": {
			args: []string{"set", "image", "statefulset/web", "app=set:6", "--field-manager=kubectl-client-side-apply"},
			la:   `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a:1"}]}}}}`,
			want: []string{"finding-true false warning"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{t: t, fields: map[string]setField{}, o: object{kind: "StatefulSet", name: "web"}, hpa: &autoscaler{min: 2, max: 3}}
			got := []framework.Reported{{Finding: framework.Finding{Action: framework.Warn, Rule: "replicas-autoscaled", Path: "spec.replicas"}, Line: warning}}
			r.judgeWrite(0, person(tc.args...), framework.Result{}, got, withLastApplied(t, before, tc.la), withLastApplied(t, after, tc.la))
			r.wantFailed(t, tc.want)
		})
	}
}
