package review

import (
	"encoding/json"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Flux's clean-up of last-applied is a JSON patch under
// kustomize-controller that removes the annotation. The API server records
// no entry for it (it sets nothing) and takes the annotation away from
// kubectl apply's entry, while kustomize-controller's own entry, an Apply
// of an earlier sync, stays as it was. It is no server-side apply whose
// orphans would be every field a person set (found by
// test/e2e/generative, seed 38: [orphaned-field] on the clean-up), and no
// apply or hand-over either: kubectl writes last-applied in both, and a
// write that drops it is imperative, with no finding unless it also
// changes a field last-applied had (seed 821794: behind a mesh injector
// that re-stamps in the same write, the clean-up was taken for an apply).
func TestLastAppliedCleanUpIsNoServerSideApply(t *testing.T) {
	entries := func(appliedLastApplied bool) string {
		applied := `{"f:spec":{"f:replicas":{}}}`
		if appliedLastApplied {
			applied = `{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{"f:replicas":{}}}`
		}
		return `[{"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"apps/v1","time":"2026-11-26T10:00:05Z","fieldsType":"FieldsV1","fieldsV1":` + applied + `},` +
			`{"manager":"kustomize-controller","operation":"Apply","apiVersion":"apps/v1","time":"2026-11-26T10:00:01Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}}]`
	}
	old := object(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","uid":"u-1","resourceVersion":"7",`+
		`"annotations":{"kubectl.kubernetes.io/last-applied-configuration":`+quote(manifest)+`,"team":"a"},"managedFields":`+entries(true)+`},`+
		`"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1"}]}}}}`)
	new := object(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","uid":"u-1","resourceVersion":"8",`+
		`"annotations":{"team":"a"},"managedFields":`+entries(false)+`},`+
		`"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1"}]}}}}`)
	w := newWrite("", "kustomize-controller", authenticationv1.UserInfo{Username: "system:serviceaccount:flux-system:kustomize-controller"}, old, new)
	if got, want := classify(w), policy.Imperative; got != want {
		t.Errorf("classify = %s, want %s", got, want)
	}
}

// The same when last-applied was all that another entry owned (kubectl
// edit --save-config's): the API server drops that entry, and no entry
// changes (generative seed 821794, sequence 003: the clean-up was taken
// for kustomize-controller's server-side apply and warned [orphaned-field]
// four times).
func TestLastAppliedCleanUpThatDropsAnEntryIsNoServerSideApply(t *testing.T) {
	kustomize := `{"manager":"kustomize-controller","operation":"Apply","apiVersion":"apps/v1","time":"2026-11-26T10:00:01Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}}`
	edit := `{"manager":"kubectl-edit","operation":"Update","apiVersion":"apps/v1","time":"2026-11-26T10:00:05Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}}`
	old := object(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","uid":"u-1","resourceVersion":"7",`+
		`"annotations":{"kubectl.kubernetes.io/last-applied-configuration":`+quote(manifest)+`,"team":"a"},"managedFields":[`+kustomize+`,`+edit+`]},`+
		`"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1"}]}}}}`)
	new := object(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","uid":"u-1","resourceVersion":"8",`+
		`"annotations":{"team":"a"},"managedFields":[`+kustomize+`]},`+
		`"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1"}]}}}}`)
	w := newWrite("", "kustomize-controller", authenticationv1.UserInfo{Username: "system:serviceaccount:flux-system:kustomize-controller"}, old, new)
	if got, want := classify(w), policy.Imperative; got != want {
		t.Errorf("classify = %s, want %s", got, want)
	}
}

// quote is s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
