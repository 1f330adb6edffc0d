package review

import (
	"github.com/apply-hygiene/apply-hygiene/merge"

	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// manifest is the last-applied of the objects below: kubectl apply's.
const manifest = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},` +
	`"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1"}]}}}}`

// digestA and digestB are the image digests a digest-pinning mutating
// webhook (Kyverno's mutateDigest, sigstore's policy-controller) pins the
// tag nginx:1 to, before and after the tag moved.
const (
	digestA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// deployment returns the Deployment of manifest as stored, with image and
// last-applied la.
func deployment(t *testing.T, image, la string) *unstructured.Unstructured {
	t.Helper()
	obj := object(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","uid":"u-1","resourceVersion":"7","creationTimestamp":"2026-11-26T10:00:00Z"},`+
		`"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1"}]}}},"status":{"replicas":2}}`)
	if err := unstructured.SetNestedSlice(obj.Object, []any{map[string]any{"name": "web", "image": image}}, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	obj.SetAnnotations(map[string]string{lastAppliedAnnotation: la})
	return obj
}

// classified is what a review of a write decided: its classification and
// the paths of its one decision.
type classified struct {
	Class policy.Classification
	Paths []string
}

// classifyCase is a write by manager from old to new, and what its review
// must decide.
type classifyCase struct {
	manager  string
	old, new *unstructured.Unstructured
	want     classified
}

// checkClassified reviews each case's write as alice with
// classifyingEvaluator and compares what it decided.
func checkClassified(t *testing.T, tests map[string]classifyCase) {
	t.Helper()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := NewReviewer(nil, classifyingEvaluator, cluster{})
			rv, err := r.ReviewUpdate(t.Context(), Update{FieldManager: tc.manager, User: authenticationv1.UserInfo{Username: "alice"}, Old: tc.old, New: tc.new}, Validate)
			if err != nil {
				t.Fatal(err)
			}
			got := classified{rv.Input.Classification, rv.Decisions[0].Paths}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("classification (-want +got):\n%s", diff)
			}
		})
	}
}

// withoutAnnotations returns obj without annotations.
func withoutAnnotations(obj *unstructured.Unstructured) *unstructured.Unstructured {
	obj.SetAnnotations(nil)
	return obj
}

// scaled returns obj with spec.replicas set to n.
func scaled(t *testing.T, obj *unstructured.Unstructured, n int64) *unstructured.Unstructured {
	t.Helper()
	if err := unstructured.SetNestedField(obj.Object, n, "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	return obj
}

// savedConfigOf is what kubectl's --save-config writes as last-applied:
// the object as sent, without the annotation (GetModifiedConfiguration in
// k8s.io/kubectl/pkg/util/apply.go), uid, resourceVersion and status
// included.
func savedConfigOf(t *testing.T, obj *unstructured.Unstructured) string {
	t.Helper()
	c := obj.DeepCopy()
	c.SetAnnotations(map[string]string{})
	b, err := json.Marshal(c.Object)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// classifyingEvaluator answers with one decision naming the
// classification and the fields the analysis found changed away from
// last-applied.
var classifyingEvaluator = policy.EvaluatorFunc(func(_ context.Context, in *policy.Input) ([]policy.Decision, error) {
	paths := []string{}
	for _, c := range in.Analysis.ImperativeChanges {
		paths = append(paths, c.Path.String())
	}
	return []policy.Decision{{Paths: paths}}, nil
})

// A write is classified by what it does, not by the field manager it
// names (issue 25): a write under kubectl apply's name that moves a field
// last-applied owns away from it is an imperative edit, while an apply of
// an unchanged manifest that puts a drifted field back is an apply; kubectl
// edit --save-config, which records the edited object as last-applied, is
// a save-config like kubectl replace --save-config.
func TestClassifyByEffect(t *testing.T) {
	edited := deployment(t, "nginx:2", manifest)
	editedSaved := deployment(t, "nginx:2", "")
	editedSaved.SetAnnotations(map[string]string{lastAppliedAnnotation: savedConfigOf(t, edited)})
	editedSaved.SetResourceVersion("8")
	// A DaemonSet's edit: the server bumps its template generation
	// annotation in the same write, after kubectl recorded the object.
	editedDaemonSet := deployment(t, "nginx:2", "")
	editedDaemonSet.SetKind("DaemonSet")
	sent := editedDaemonSet.DeepCopy()
	sent.SetAnnotations(map[string]string{merge.DaemonSetGenerationAnnotation: "2"})
	savedDaemonSet, err := json.Marshal(sent.Object)
	if err != nil {
		t.Fatal(err)
	}
	editedDaemonSet.SetAnnotations(map[string]string{merge.DaemonSetGenerationAnnotation: "3", lastAppliedAnnotation: string(savedDaemonSet)})
	oldDaemonSet := deployment(t, "nginx:1", manifest)
	oldDaemonSet.SetKind("DaemonSet")
	// An earlier kubectl edit --save-config recorded the object at
	// resourceVersion 5; a later plain kubectl edit whose search-and-replace
	// changes the image in last-applied too keeps that old record.
	staleSaved := func(image string) string {
		earlier := deployment(t, image, "")
		earlier.SetResourceVersion("5")
		return savedConfigOf(t, earlier)
	}
	// moved is obj after a write that nobody recorded (status).
	moved := func(obj *unstructured.Unstructured) *unstructured.Unstructured {
		obj.SetResourceVersion("8")
		return obj
	}
	// savedAt is the record of obj as read at resourceVersion rv.
	savedAt := func(obj *unstructured.Unstructured, rv string) string {
		obj.SetResourceVersion(rv)
		return savedConfigOf(t, obj)
	}
	replacedLA := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},` +
		`"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"nginx:2"}]}}}}`
	type want = classified
	tests := map[string]classifyCase{
		"kubectl set image --field-manager=kubectl-client-side-apply is an imperative edit": {
			manager: "kubectl-client-side-apply", old: deployment(t, "nginx:1", manifest), new: deployment(t, "nginx:2", manifest),
			want: want{policy.Imperative, []string{"spec.template.spec.containers[name=web].image"}},
		},
		"an apply of an unchanged manifest that puts a drifted image back is an apply": {
			manager: "kubectl-client-side-apply", old: deployment(t, "nginx:2", manifest), new: deployment(t, "nginx:1", manifest),
			want: want{policy.ClientSideApply, []string{}},
		},
		"an apply of an unchanged manifest whose image a digest-pinning webhook rewrites is an apply": {
			// Applied with nginx:1; the webhook stored nginx:1@sha256:A; the
			// tag moved; kubectl apply of the same manifest sends image
			// nginx:1 (live differs from last-applied) and the webhook
			// rewrites it to nginx:1@sha256:B: still not last-applied's
			// value, but kubectl's own patch set it.
			manager: "kubectl-client-side-apply", old: deployment(t, "nginx:1@sha256:"+digestA, manifest), new: deployment(t, "nginx:1@sha256:"+digestB, manifest),
			want: want{policy.ClientSideApply, []string{}},
		},
		"a write under kubectl apply's name behind the digest-pinning webhook that also scales is an edit of replicas alone": {
			manager: "kubectl-client-side-apply", old: deployment(t, "nginx:1@sha256:"+digestA, manifest), new: scaled(t, deployment(t, "nginx:1@sha256:"+digestB, manifest), 5),
			want: want{policy.Imperative, []string{"spec.replicas"}},
		},
		"an apply of a new manifest is an apply": {
			manager: "kubectl-client-side-apply", old: deployment(t, "nginx:1", manifest), new: deployment(t, "nginx:2", replacedLA),
			want: want{policy.ClientSideApply, []string{}},
		},
		"kubectl edit --save-config is a save-config": {
			manager: "kubectl-edit", old: deployment(t, "nginx:1", manifest), new: editedSaved,
			want: want{policy.SaveConfig, []string{}},
		},
		"kubectl edit --save-config of a DaemonSet's template is a save-config (generative seed 287868)": {
			manager: "kubectl-edit", old: oldDaemonSet, new: editedDaemonSet,
			want: want{policy.SaveConfig, []string{}},
		},
		"a plain kubectl edit after an earlier kubectl edit --save-config, changing last-applied along with the image, is an edit": {
			manager: "kubectl-edit", old: deployment(t, "nginx:1", staleSaved("nginx:1")), new: deployment(t, "nginx:2", staleSaved("nginx:2")),
			want: want{policy.Imperative, []string{"spec.template.spec.containers[name=web].image"}},
		},
		// kubectl edit sends no resourceVersion precondition: a status
		// write while the editor was open moved the object on from the
		// version kubectl read and recorded.
		"kubectl edit --save-config while a controller wrote the object": {
			manager: "kubectl-edit", old: moved(deployment(t, "nginx:1", manifest)), new: deployment(t, "nginx:2", savedAt(deployment(t, "nginx:2", ""), "7")),
			want: want{policy.SaveConfig, []string{}},
		},
		"a second kubectl edit --save-config over an earlier record": {
			manager: "kubectl-edit", old: moved(deployment(t, "nginx:1", staleSaved("nginx:1"))), new: deployment(t, "nginx:2", savedAt(deployment(t, "nginx:2", ""), "7")),
			want: want{policy.SaveConfig, []string{}},
		},
		"kubectl replace --save-config is a save-config": {
			manager: "kubectl-replace", old: deployment(t, "nginx:1", manifest), new: deployment(t, "nginx:2", replacedLA),
			want: want{policy.SaveConfig, []string{}},
		},
		// kubectl apply always writes last-applied: a write that drops it
		// (Flux's kustomize-controller before its first server-side apply)
		// is no apply, and orphaned-field is no news to it (generative
		// seed 821794, sequence 003).
		"Flux's removal of last-applied is no apply": {
			manager: "kustomize-controller", old: deployment(t, "nginx:1", manifest), new: withoutAnnotations(deployment(t, "nginx:1", "")),
			want: want{policy.Imperative, []string{}},
		},
		"kubectl edit that changes last-applied along with the image is an edit": {
			manager: "kubectl-edit", old: deployment(t, "nginx:1", manifest), new: deployment(t, "nginx:2", replacedLA),
			want: want{policy.Imperative, []string{"spec.template.spec.containers[name=web].image"}},
		},
	}
	checkClassified(t, tests)
}
