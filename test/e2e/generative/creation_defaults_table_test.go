package generative_test

import (
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// An orphaned-field finding of a server-side apply is allowed, not
// required, at a default of the creation that the manifest's change made
// stale (seed 281152, sequence 030): imagePullPolicy Always, which the API
// server gave minio/minio:latest at the creation, left by the migration
// once the manifest moved the image to a tag. The server decides what the
// default is now (here a stand-in of its rule for imagePullPolicy). The
// same finding is false where the value is still the default, where the
// creating manifest set it, where it changed since, or with no creation
// known.
func TestJudgeStaleCreationDefault(t *testing.T) {
	const (
		creating = `{"spec":{"template":{"spec":{"containers":[{"name":"minio","image":"minio/minio:latest"}]}}}}`
		created  = `{"spec":{"template":{"spec":{"containers":[{"name":"minio","image":"minio/minio:latest","imagePullPolicy":"Always"}]}}}}`
		manifest = `{"spec":{"template":{"spec":{"containers":[{"name":"minio","image":"registry.example/manifest:3"}]}}}}`
		after    = `{"spec":{"template":{"spec":{"containers":[{"name":"minio","image":"registry.example/manifest:3","imagePullPolicy":"Always"}]}}}}`
	)
	policy := framework.ContainersPath.Named("minio").Key("imagePullPolicy")
	tests := map[string]struct {
		creating, created, manifest, after string
		noCreation                         bool
		want                               []string
	}{
		"the default of the old image, stale for the new one": {creating: creating, created: created, manifest: manifest, after: after},
		"still the default of the image": {
			creating: creating, created: created, manifest: creating, after: created,
			want: []string{"finding-true false warning"},
		},
		"the creating manifest set it": {
			creating: created, created: created, manifest: manifest, after: after,
			want: []string{"finding-true false warning"},
		},
		"changed since the creation": {
			creating: creating, created: strings.Replace(created, "Always", "Never", 1), manifest: manifest, after: after,
			want: []string{"finding-true false warning"},
		},
		"no creation known": {
			creating: creating, created: created, manifest: manifest, after: after, noCreation: true,
			want: []string{"finding-true false warning"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{t: t, fields: map[string]setField{}}
			r.serverDefault = func(obj map[string]any, _ fieldPath) (any, bool, error) {
				image, _ := framework.ContainersPath.Named("minio").Key("image").Lookup(obj)
				if strings.HasSuffix(image.(string), ":latest") {
					return "Always", true, nil
				}
				return "IfNotPresent", true, nil
			}
			if !tc.noCreation {
				r.created = &createdObject{spec: decodeJSON(t, tc.created), manifest: decodeJSON(t, tc.creating)}
			}
			s := step{As: alice, Kind: serverSideApply, Args: []string{"apply", "--server-side", "-f", "-"}, Stdin: tc.manifest}
			got := []framework.Reported{{Finding: framework.Finding{Action: framework.Warn, Rule: "orphaned-field", Path: policy.String()}, Line: "Warning: [orphaned-field] " + policy.String()}}
			r.judgeWrite(0, s, framework.Result{}, got, decodeJSON(t, tc.after), decodeJSON(t, tc.after))
			r.wantFailed(t, tc.want)
		})
	}
}
