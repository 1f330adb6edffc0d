package generative_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The objects of soak seed 271126, sequence 212: kubectl rollout undo
// restored revision 1, whose imagePullPolicy Always the server had
// defaulted next to minio/minio:latest, over the IfNotPresent that it
// defaulted when a server-side apply tagged the image; the next kubectl
// apply keeps the image at latest.
const (
	restoredManifest = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"minio"},"spec":{"template":{"spec":{"containers":[{"name":"minio","image":"minio/minio:latest"}]}}}}`
	restoredBefore   = `{"spec":{"template":{"spec":{"containers":[{"name":"minio","image":"minio/minio:latest","imagePullPolicy":"IfNotPresent"}]}}}}`
	restoredUndone   = `{"spec":{"template":{"spec":{"containers":[{"name":"minio","image":"minio/minio:latest","imagePullPolicy":"Always"}]}}}}`
)

// A field a person's write set that the server gives back when it is
// removed is no orphan: the next apply need not report it. One that it
// does not give back must be reported.
func TestJudgeApplyOrphanTheServerRestores(t *testing.T) {
	tests := map[string]struct {
		restored bool
		want     []string
	}{
		"the pull policy the server gives back": {restored: true},
		"a pull policy the server does not give back": {
			want: []string{"orphaned-field-reported expected [orphaned-field] spec.template.spec.containers[name=minio].imagePullPolicy"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var asked []string
			r := &runner{t: t, fields: map[string]setField{}, restored: func(q fieldPath, obj map[string]any) bool {
				v, _ := q.Lookup(obj)
				asked = append(asked, q.String()+"="+v.(string))
				return tc.restored
			}}
			r.record(step{Writer: "kubectl rollout undo", As: alice, Kind: undo, Args: []string{"rollout", "undo", "deployment/minio"}},
				withLastApplied(t, restoredBefore, restoredManifest), withLastApplied(t, restoredUndone, restoredManifest))
			apply := step{Writer: "kubectl apply", As: alice, Kind: clientSideApply, Args: []string{"apply", "-f", "-"}, Stdin: restoredManifest}
			r.judgeApply(0, apply, framework.Result{Stdout: "deployment.apps/minio configured"}, nil,
				withLastApplied(t, restoredUndone, restoredManifest), withLastApplied(t, restoredUndone, restoredManifest))
			var got []string
			for _, f := range r.failures {
				got = append(got, f.check+" "+f.detail)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("failed checks (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"spec.template.spec.containers[name=minio].imagePullPolicy=Always"}, asked); diff != "" {
				t.Errorf("fields asked of the server (-want +got):\n%s", diff)
			}
		})
	}
}
