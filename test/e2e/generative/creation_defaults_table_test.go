package generative_test

import (
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// An orphaned-field finding of a server-side apply is allowed, not
// required, at a default of the creation that the manifest's change made
// stale and that kubectl-client-side-apply's entry still owns (seed
// 281152, sequence 030): imagePullPolicy Always, which the API server gave
// minio/minio:latest at the creation, left by the migration once the
// manifest moved the image to a tag. The server decides whether removing
// it gives it back (here a stand-in of its rule for imagePullPolicy). The
// same finding is false where the value is still the default, where the
// creating manifest set it, where it changed or a robot set it since,
// where no entry or another one owns it (a re-creation by a server-side
// apply, the autoscaler), or with no creation known.
func TestJudgeStaleCreationDefault(t *testing.T) {
	const (
		creating = `{"spec":{"template":{"spec":{"containers":[{"name":"minio","image":"minio/minio:latest"}]}}}}`
		created  = `{"spec":{"template":{"spec":{"containers":[{"name":"minio","image":"minio/minio:latest","imagePullPolicy":"Always"}]}}}}`
		manifest = `{"spec":{"template":{"spec":{"containers":[{"name":"minio","image":"registry.example/manifest:3"}]}}}}`
		after    = `{"spec":{"template":{"spec":{"containers":[{"name":"minio","image":"registry.example/manifest:3","imagePullPolicy":"Always"}]}}}}`
		// csaOwns is the entry kubectl's migration left:
		// kubectl-client-side-apply's Update, owning the pull policy.
		csaOwns = `{"metadata":{"managedFields":[{"manager":"kubectl-client-side-apply","operation":"Update","fieldsV1":{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"minio\"}":{"f:imagePullPolicy":{}}}}}}}}]}}`
	)
	policy := framework.ContainersPath.Named("minio").Key("imagePullPolicy")
	tests := map[string]struct {
		creating, created, manifest, after string
		owners                             string
		noCreation, setSince               bool
		want                               []string
	}{
		"the default of the old image, stale for the new one": {creating: creating, created: created, manifest: manifest, after: after, owners: csaOwns},
		"still the default of the image": {
			creating: creating, created: created, manifest: creating, after: created, owners: csaOwns,
			want: []string{"finding-true false warning"},
		},
		"the creating manifest set it": {
			creating: created, created: created, manifest: manifest, after: after, owners: csaOwns,
			want: []string{"finding-true false warning"},
		},
		"changed since the creation": {
			creating: creating, created: strings.Replace(created, "Always", "Never", 1), manifest: manifest, after: after, owners: csaOwns,
			want: []string{"finding-true false warning"},
		},
		"a robot set it since, to the same value": {
			creating: creating, created: created, manifest: manifest, after: after, owners: csaOwns, setSince: true,
			want: []string{"finding-true false warning"},
		},
		"no entry owns it (created by a server-side apply)": {
			creating: creating, created: created, manifest: manifest, after: after, owners: `{}`,
			want: []string{"finding-true false warning"},
		},
		"kubectl replace's entry owns it": {
			creating: creating, created: created, manifest: manifest, after: after, owners: strings.Replace(csaOwns, "kubectl-client-side-apply", "kubectl-replace", 1),
		},
		"a controller's entry owns it": {
			creating: creating, created: created, manifest: manifest, after: after, owners: strings.Replace(csaOwns, "kubectl-client-side-apply", "kube-controller-manager", 1),
			want: []string{"finding-true false warning"},
		},
		"no creation known": {
			creating: creating, created: created, manifest: manifest, after: after, owners: csaOwns, noCreation: true,
			want: []string{"finding-true false warning"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{t: t, fields: map[string]setField{}}
			r.restored = func(q fieldPath, obj map[string]any) bool {
				image, _ := framework.ContainersPath.Named("minio").Key("image").Lookup(obj)
				live, _ := q.Lookup(obj)
				return strings.HasSuffix(image.(string), ":latest") == (live == "Always")
			}
			if !tc.noCreation {
				r.created = &createdObject{spec: decodeJSON(t, tc.created), manifest: decodeJSON(t, tc.creating)}
			}
			if tc.setSince {
				r.fields[policy.String()] = setField{path: policy}
			}
			obj := decodeJSON(t, tc.after)
			obj["metadata"] = decodeJSON(t, tc.owners)["metadata"]
			s := step{As: alice, Kind: serverSideApply, Args: []string{"apply", "--server-side", "-f", "-"}, Stdin: tc.manifest}
			got := []framework.Reported{{Finding: framework.Finding{Action: framework.Warn, Rule: "orphaned-field", Path: policy.String()}, Line: "Warning: [orphaned-field] " + policy.String()}}
			r.judgeWrite(0, s, framework.Result{}, got, obj, obj)
			r.wantFailed(t, tc.want)
		})
	}
}
