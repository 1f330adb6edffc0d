package review_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// credentialsManifest is the manifest of Secret shop/credentials.
const credentialsManifest = `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"credentials","namespace":"shop"},"type":"Opaque",` +
	`"data":{"token":"ZnJvbS10aGUtbWFuaWZlc3Q=","user":"YXBw"}}`

// Entries of metadata.managedFields of the drifted Secret: client-side
// apply's (the annotation, data.user and type; data.token went to the
// robot that changed it), the robot's kubectl patch, a person's kubectl
// label; and the Apply entries that migrate's upgrade moves client-side
// apply's fields to.
const (
	csaEntry = `{"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"v1","time":"2026-11-26T14:00:00Z","fieldsType":"FieldsV1",` +
		`"fieldsV1":{"f:data":{".":{},"f:user":{}},"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:type":{}}}`
	robotEntry = `{"manager":"kubectl-patch","operation":"Update","apiVersion":"v1","time":"2026-11-26T14:05:00Z","fieldsType":"FieldsV1",` +
		`"fieldsV1":{"f:data":{"f:token":{}}}}`
	labelEntry = `{"manager":"kubectl-label","operation":"Update","apiVersion":"v1","time":"2026-11-26T14:06:00Z","fieldsType":"FieldsV1",` +
		`"fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:extra":{}}}}}`
	lastAppliedEntry = `{"manager":"kubectl-last-applied","operation":"Apply","apiVersion":"v1","time":"2026-11-26T14:10:00Z","fieldsType":"FieldsV1",` +
		`"fieldsV1":{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}}`
	upgradedEntry = `{"manager":"MANAGER","operation":"Apply","apiVersion":"v1","time":"2026-11-26T14:10:00Z","fieldsType":"FieldsV1",` +
		`"fieldsV1":{"f:data":{".":{},"f:user":{}},"f:type":{}}}`
)

// driftedCredentials is Secret shop/credentials applied client-side from
// credentialsManifest, its token changed by a robot and a label added by
// a person, with entries as its managedFields.
func driftedCredentials(t *testing.T, entries ...string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON([]byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"credentials","namespace":"shop","resourceVersion":"7",` +
		`"labels":{"extra":"1"},"managedFields":[` + strings.Join(entries, ",") + `]},"type":"Opaque",` +
		`"data":{"token":"ZnJvbS10aGUtcm9ib3Q=","user":"YXBw"}}`)); err != nil {
		t.Fatal(err)
	}
	obj.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": credentialsManifest})
	return obj
}

// The managedFields upgrade of a drifted Secret (kubectl hygiene migrate
// --server-side, kubectl's csaupgrade) moves client-side apply's fields
// to an Apply entry and changes no field: no rule decides on it. Before,
// it was reviewed as a server-side apply of that entry's fields, and
// orphaned-field warned about the robot's token, which last-applied has,
// and the label. A server-side apply that changes no value still is one:
// its orphans are reported.
func TestOwnershipHandOverIsNotReviewed(t *testing.T) {
	engine, err := policy.New(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	r := review.NewReviewer(nil, engine, noCluster{})
	admin := authenticationv1.UserInfo{Username: "alice", Groups: []string{"system:authenticated"}}
	upgraded := func(manager string) string { return strings.Replace(upgradedEntry, "MANAGER", manager, 1) }
	// sharedEntry is deploy-bot's server-side apply of the Secret's data
	// and type as they are.
	sharedEntry := strings.Replace(upgraded("deploy-bot"), `"f:user":{}`, `"f:token":{},"f:user":{}`, 1)
	old := []string{csaEntry, robotEntry, labelEntry}
	tests := map[string]struct {
		manager string
		new     []string
		want    []string
	}{
		// migrate's entries in its order: the Apply entry where
		// client-side apply's was, kubectl-last-applied's last.
		"migrate's upgrade to kubectl": {
			new: []string{upgraded("kubectl"), robotEntry, labelEntry, lastAppliedEntry}},
		"migrate's upgrade to another manager": {
			new: []string{upgraded("canary-applier"), robotEntry, labelEntry, lastAppliedEntry}},
		"kubectl's csaupgrade under its field manager": {
			manager: "kubectl", new: []string{upgraded("kubectl"), robotEntry, labelEntry}},
		"a server-side apply of the same values shares the fields and leaves an orphan": {
			manager: "deploy-bot", new: []string{csaEntry, robotEntry, labelEntry, sharedEntry},
			want: []string{"orphaned-field warn metadata.labels.extra"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for _, pass := range []review.Pass{review.Mutate, review.Validate} {
				u := review.Update{FieldManager: tc.manager, User: admin, Old: driftedCredentials(t, old...), New: driftedCredentials(t, tc.new...)}
				rv, err := r.ReviewUpdate(t.Context(), u, pass)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				if rv != nil {
					for _, d := range rv.Decisions {
						got = append(got, string(d.Rule)+" "+string(d.Action)+" "+strings.Join(d.Paths, ","))
					}
				}
				if pass == review.Mutate && tc.want != nil {
					continue
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("decisions of the %v pass (-want +got):\n%s", pass, diff)
				}
			}
		})
	}
}
