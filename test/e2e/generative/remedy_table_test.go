package generative_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The command an orphaned-field warning prints must remove the field; its
// guard may refuse only an object that changed since the warning so that
// the patch no longer applies: soak seed 271126, sequence 458, where
// kubectl hygiene audit --fix=apply removed the orphan between the apply
// that printed the command and the step that ran it.
func TestJudgeRemedy(t *testing.T) {
	const (
		path    = "metadata.annotations[gen.example.com/k-8]"
		cmd     = `kubectl patch statefulsets.apps/web -n demo --type=json -p '[{"op":"test","path":"/metadata/annotations/gen.example.com~1k-8","value":"o7"},{"op":"remove","path":"/metadata/annotations/gen.example.com~1k-8"}]'`
		refused = "The request is invalid: the server rejected our request due to an error in our request"
	)
	warned := `{"metadata":{"name":"web","labels":{"a":"1"},"annotations":{"gen.example.com/k-8":"o7"}},"spec":{"replicas":1}}`
	removed := `{"metadata":{"name":"web","labels":{"a":"1"}},"spec":{"replicas":1}}`
	tests := map[string]struct {
		before, after string
		res           framework.Result
		want          []string
		remedied      []string
	}{
		"the audit's fix removed the orphan since the warning: the guard refuses": {
			before: removed, after: removed,
			res: framework.Result{ExitCode: 1, Stderr: refused},
		},
		"a person changed the value since the warning: the guard refuses": {
			before: `{"metadata":{"name":"web","labels":{"a":"1"},"annotations":{"gen.example.com/k-8":"o8"}},"spec":{"replicas":1}}`,
			after:  `{"metadata":{"name":"web","labels":{"a":"1"},"annotations":{"gen.example.com/k-8":"o8"}},"spec":{"replicas":1}}`,
			res:    framework.Result{ExitCode: 1, Stderr: refused},
		},
		"the object is as warned, and the command fails": {
			before: warned, after: warned,
			res:  framework.Result{ExitCode: 1, Stderr: refused},
			want: []string{"remedy-runs"},
		},
		"another field changed, the patch applies, and the command fails": {
			before: `{"metadata":{"name":"web","labels":{"a":"2"},"annotations":{"gen.example.com/k-8":"o7"}},"spec":{"replicas":1}}`,
			after:  `{"metadata":{"name":"web","labels":{"a":"2"},"annotations":{"gen.example.com/k-8":"o7"}},"spec":{"replicas":1}}`,
			res:    framework.Result{ExitCode: 1, Stderr: refused},
			want:   []string{"remedy-runs"},
		},
		"the orphan is gone, and the command fails for another reason": {
			before: removed, after: removed,
			res:  framework.Result{ExitCode: 1, Stderr: `Error from server (Forbidden): statefulsets.apps "web" is forbidden`},
			want: []string{"remedy-runs"},
		},
		"the command removes the orphan": {
			before: warned, after: removed,
			res:      framework.Result{Stdout: "statefulset.apps/web patched"},
			remedied: []string{path},
		},
		"the command changes nothing": {
			before: warned, after: warned,
			res:  framework.Result{Stdout: "statefulset.apps/web patched (no change)"},
			want: []string{"remedy-changes"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before := decodeJSON(t, tc.before)
			// The step before the remedy (kubectl hygiene audit
			// --fix=apply) left the object as the remedy finds it.
			r := &runner{t: t, fields: map[string]setField{}, warned: decodeJSON(t, warned), last: before}
			r.judgeRemedy(0, path, cmd, tc.res, before, decodeJSON(t, tc.after))
			got := r.failedChecks()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("failed checks (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.remedied, r.remedied); diff != "" {
				t.Errorf("remedied (-want +got):\n%s", diff)
			}
		})
	}
}
