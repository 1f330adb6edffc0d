package merge_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

func object(s string) *unstructured.Unstructured {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		panic(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// The StatefulSet of seed 004 after `kubectl rollout undo`: the undo put
// TO_BE_DELETED back, but last-applied still is the v2 manifest without it.
// Applying v3 keeps it.
func ExampleAnalyzer_AnalyzeClientSideApply() {
	live := object(`{"apiVersion":"apps/v1","kind":"StatefulSet",
	  "metadata":{"name":"app","namespace":"default","annotations":{
	    "kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"app\",\"namespace\":\"default\"},\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"nginx\",\"image\":\"nginx:broken\",\"env\":[{\"name\":\"ANOTHER_ENV\",\"value\":\"b\"}]}]}}}}"},
	    "managedFields":[{"manager":"kubectl","operation":"Update","apiVersion":"apps/v1","fieldsType":"FieldsV1",
	      "fieldsV1":{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{"f:env":{"k:{\"name\":\"TO_BE_DELETED\"}":{".":{},"f:name":{},"f:value":{}}}}}}}}}}]},
	  "spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:latest",
	    "env":[{"name":"TO_BE_DELETED","value":"a"},{"name":"ANOTHER_ENV","value":"b"}]}]}}}}`)
	v3 := object(`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"app","namespace":"default"},
	  "spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.27","env":[{"name":"ANOTHER_ENV","value":"b"}]}]}}}}`)

	a := merge.NewAnalyzer()
	res, err := a.ApplyManifest(v3, live) // the object kubectl apply writes
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	an, err := a.AnalyzeClientSideApply(live, res.Result) // the write, as the webhook sees it
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(res.Strategy)
	for _, o := range an.Orphans {
		fmt.Println("orphan:", o.Path, "set by", o.Owners[0].Manager)
		fmt.Println("remove with:", o.RemovePatch)
	}
	for _, r := range an.Reverts {
		fmt.Println("revert:", r.Path, r.Live, "->", r.Result)
	}
	// Output:
	// strategicMergePatch
	// orphan: spec.template.spec.containers[name=nginx].env[name=TO_BE_DELETED] set by kubectl
	// remove with: [{"op":"test","path":"/spec/template/spec/containers/0/name","value":"nginx"},{"op":"test","path":"/spec/template/spec/containers/0/env/0/name","value":"TO_BE_DELETED"},{"op":"remove","path":"/spec/template/spec/containers/0/env/0"}]
	// revert: spec.template.spec.containers[name=nginx].image nginx:latest -> nginx:1.27
}

func ExampleAnalyzer_Apply() {
	original := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"minReadySeconds":5}}`)
	modified := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{}}`)
	current := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"minReadySeconds":5,"replicas":2}}`)
	res, err := merge.NewAnalyzer().Apply(original, modified, current)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(res.Strategy, string(res.Patch))
	spec, _, _ := unstructured.NestedMap(res.Result.Object, "spec")
	fmt.Println(spec)
	// Output:
	// strategicMergePatch {"spec":{"minReadySeconds":null}}
	// map[replicas:2]
}

func ExampleAnalyzer_AnalyzeUpdate() {
	old := object(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","annotations":{
	  "kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\"},\"spec\":{\"minReadySeconds\":5}}"}},
	  "spec":{"minReadySeconds":5}}`)
	edited := old.DeepCopy()
	_ = unstructured.SetNestedField(edited.Object, int64(10), "spec", "minReadySeconds")
	an, err := merge.NewAnalyzer().AnalyzeUpdate(old, edited)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for _, c := range an.ImperativeChanges {
		fmt.Println(c.Path, c.LastApplied, "->", c.Result)
	}
	// Output:
	// spec.minReadySeconds 5 -> 10
}

// With WithShadowVerify every analysis runs twice, with and without the
// shortcuts that compare only what changed, and fails with
// ErrShadowMismatch when they disagree: for end-to-end and load runs.
func ExampleWithShadowVerify() {
	old := object(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","annotations":{
	  "kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\"},\"spec\":{\"minReadySeconds\":5}}"}},
	  "spec":{"minReadySeconds":5}}`)
	edited := old.DeepCopy()
	_ = unstructured.SetNestedField(edited.Object, int64(10), "spec", "minReadySeconds")
	an, err := merge.NewAnalyzer(merge.WithShadowVerify()).AnalyzeUpdate(old, edited)
	if errors.Is(err, merge.ErrShadowMismatch) {
		fmt.Println("mismatch:", err)
		return
	}
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(len(an.ImperativeChanges), "imperative change, verified")
	// Output:
	// 1 imperative change, verified
}

func ExampleAnalyzer_DetectRollback() {
	tpl := func(image string) string {
		return `{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"` + image + `"}]}}`
	}
	la := `{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\"},\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"web\",\"image\":\"web:2\"}]}}}}`
	deploy := func(image string) *unstructured.Unstructured {
		return object(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","annotations":{
		  "kubectl.kubernetes.io/last-applied-configuration":"` + la + `"}},"spec":{"template":` + tpl(image) + `}}`)
	}
	rs := object(`{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web-1","annotations":{"deployment.kubernetes.io/revision":"1"}},
	  "spec":{"template":` + tpl("web:1") + `}}`)
	rb, err := merge.NewAnalyzer().DetectRollback(deploy("web:2"), deploy("web:1"), []*unstructured.Unstructured{rs})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(rb.RevisionName, rb.StaleLastApplied, rb.RepairSource)
	fmt.Print(rb.RepairedLastApplied)
	// Output:
	// web-1 true rebuilt
	// {"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"template":{"spec":{"containers":[{"image":"web:1","name":"web"}]}}}}
}

// The validating pass of an undo that the mutating pass repaired, after a
// mutating webhook called later labelled the restored pod template: the
// template is no revision's, but last-applied is exactly the repair.
func ExampleAnalyzer_RepairedRollback() {
	tpl := func(image, team string) string {
		return `{"metadata":{"labels":{"app":"web"` + team + `}},"spec":{"containers":[{"name":"web","image":"` + image + `"}]}}`
	}
	la := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"template":{"spec":{"containers":[{"name":"web","image":"web:2"}]}}}}`
	deploy := func(image, team string) *unstructured.Unstructured {
		obj := object(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"template":` + tpl(image, team) + `}}`)
		merge.SetLastApplied(obj, la)
		return obj
	}
	revisions := []*unstructured.Unstructured{object(`{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web-1",
	  "annotations":{"deployment.kubernetes.io/revision":"1"}},"spec":{"template":` + tpl("web:1", "") + `}}`)}
	a := merge.NewAnalyzer()
	old := deploy("web:2", "")
	undo, err := a.DetectRollback(old, deploy("web:1", ""), revisions)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	labelled := deploy("web:1", `,"policy.example.com/team":"web"`)
	merge.SetLastApplied(labelled, undo.RepairedLastApplied)
	rb, err := a.RepairedRollback(old, labelled, revisions)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(rb.RevisionName, rb.Confirmed, rb.StaleLastApplied)
	// Output:
	// web-1 true false
}

// A Deployment as the audit finds it after `kubectl rollout undo`: its pod
// template is revision 1 again (the ReplicaSet web-1, renumbered 3), while
// last-applied still describes revision 2. managedFields prove the undo:
// the restored image is owned by kubectl's Update without field manager.
func ExampleAnalyzer_StaleRollback() {
	tpl := func(image string) string {
		return `{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"` + image + `"}]}}`
	}
	la := `{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\"},\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"web\",\"image\":\"web:2\"}]}}}}`
	live := object(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","annotations":{
	  "kubectl.kubernetes.io/last-applied-configuration":"` + la + `"},
	  "managedFields":[
	    {"manager":"kubectl","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:image":{}}}}}}}}]},
	  "spec":{"template":` + tpl("web:1") + `}}`)
	revisions := []*unstructured.Unstructured{
		object(`{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web-1","annotations":{
		  "deployment.kubernetes.io/revision":"3","deployment.kubernetes.io/revision-history":"1"}},"spec":{"template":` + tpl("web:1") + `}}`),
		object(`{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web-2","annotations":{
		  "deployment.kubernetes.io/revision":"2"}},"spec":{"template":` + tpl("web:2") + `}}`),
	}
	a := merge.NewAnalyzer()
	an, err := a.AnalyzeLive(live)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	if !merge.MayHaveStaleLastApplied(live, an) {
		fmt.Println("last-applied describes the template")
		return
	}
	rb, err := a.StaleRollback(live, revisions)
	switch {
	case err != nil:
		fmt.Println("error:", err)
		return
	case rb == nil:
		fmt.Println("no rollout undo proven")
		return
	}
	fmt.Println(rb.RevisionName, rb.Revision, rb.StaleLastApplied, rb.RepairSource)
	fmt.Print(rb.RepairedLastApplied)
	// Output:
	// web-1 3 true rebuilt
	// {"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"template":{"spec":{"containers":[{"image":"web:1","name":"web"}]}}}}
}

func ExampleParseLastApplied() {
	obj := object(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","annotations":{
	  "kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"api\"}}"}}}`)
	_, err := merge.ParseLastApplied(obj)
	switch {
	case errors.Is(err, merge.ErrMissingLastApplied):
		fmt.Println("missing")
	case errors.Is(err, merge.ErrInvalidLastApplied):
		fmt.Println(err)
	}
	// Output:
	// invalid kubectl.kubernetes.io/last-applied-configuration annotation: it names "api", not "web"
}

func ExampleParsePath() {
	p, err := merge.ParsePath("spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(len(p), p)
	// Output:
	// 5 spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]
}

func ExampleAnalyzer_Explain() {
	live := object(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","annotations":{
	  "kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\"},\"spec\":{\"minReadySeconds\":5}}"},
	  "managedFields":[
	    {"manager":"kubectl-client-side-apply","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:revisionHistoryLimit":{}}}},
	    {"manager":"kubectl-edit","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:minReadySeconds":{}}}},
	    {"manager":"kubectl-patch","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:progressDeadlineSeconds":{}}}}]},
	  "spec":{"minReadySeconds":7,"revisionHistoryLimit":10,"progressDeadlineSeconds":120}}`)
	ex, err := merge.NewAnalyzer().Explain(live)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for _, f := range ex.Fields {
		fmt.Println(f.Path, f.Value, "lastApplied:", f.LastApplied, "default:", f.Default, "drift:", f.Drift, "orphan:", f.Orphan)
	}
	// Output:
	// apiVersion apps/v1 lastApplied: true default: false drift: false orphan: false
	// kind Deployment lastApplied: true default: false drift: false orphan: false
	// metadata.name web lastApplied: true default: false drift: false orphan: false
	// spec.minReadySeconds 7 lastApplied: true default: false drift: true orphan: false
	// spec.progressDeadlineSeconds 120 lastApplied: false default: false drift: false orphan: true
	// spec.revisionHistoryLimit 10 lastApplied: false default: true drift: false orphan: false
}

// Declared fields drop out of an analysis: a mesh's annotation that the
// cluster owns is no orphan. A wildcard is a whole element: the key
// "sidecar.istio.io/*" is only that key.
func ExampleAnalysis_WithoutDeclared() {
	status, err := merge.ParsePath("metadata.annotations[sidecar.istio.io/status]")
	if err != nil {
		fmt.Println(err)
		return
	}
	an := &merge.Analysis{Orphans: []merge.FieldFact{{Path: status}}}
	mesh, err := merge.ParsePattern("metadata.annotations[sidecar.istio.io/*]")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(an.WithoutDeclared("kubectl-client-side-apply", []merge.Declared{{Pattern: mesh}}).Orphans))
	all, err := merge.ParsePattern("metadata.annotations.*")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(an.WithoutDeclared("kubectl-client-side-apply", []merge.Declared{{Pattern: all}}).Orphans))
	// Output:
	// 1
	// 0
}

// Declared fields drop out of an explanation: spec.replicas, which an
// autoscaler writes, is listed but no longer as drift.
func ExampleExplanation_WithoutDeclared() {
	replicas, err := merge.ParsePath("spec.replicas")
	if err != nil {
		fmt.Println(err)
		return
	}
	ex := &merge.Explanation{
		Analysis: &merge.Analysis{Drift: []merge.FieldFact{{Path: replicas}}},
		Fields:   []merge.FieldInfo{{Path: replicas, Value: int64(5), LastApplied: true, Drift: true}},
	}
	owned, err := merge.ParsePattern("spec.replicas")
	if err != nil {
		fmt.Println(err)
		return
	}
	out := ex.WithoutDeclared([]merge.Declared{{Pattern: owned}})
	fmt.Println(out.Fields[0].Path, out.Fields[0].Drift, len(out.Analysis.Drift))
	fmt.Println(ex.Fields[0].Drift)
	// Output:
	// spec.replicas false 0
	// true
}
