package reliability_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
	"github.com/apply-hygiene/apply-hygiene/webhook"
)

// The chart's ClusterRole (url mode: no self-managed TLS) grants exactly
// the calls the server makes, each over a recording fake dynamic client:
// the Reviewer on kube.Cluster, driven through every request that
// reads the cluster — /scale of each workload kind that has one (the
// parent: get; a DaemonSet has none, and the chart grants no get on it), a
// rollout undo candidate of each (the revisions: list), and the namespace
// labels of every review (get), a client-side apply that leaves an orphan
// candidate (the removal proof's dry run: patch), and the events it
// records on the denied scales (events.k8s.io), plus the list and watch of the
// HorizontalPodAutoscaler cache (autoscalerCalls) — and, with
// audit.enabled, a scan of the
// audit.Scanner over objects whose template is older than last-applied
// (list of the kinds, of the revisions, get of namespaces); with a custom
// resource with scale among extraKinds, /scale of it (its CRD: get by
// name, the only grant by name; the parent: get).
func TestClusterRoleIsExactlyWhatTheCodeCalls(t *testing.T) {
	tests := map[string]struct {
		values []string
		calls  func(t *testing.T) []string
	}{
		"admission only (the default)": {calls: func(t *testing.T) []string {
			return union(reviewerCalls(t), autoscalerCalls(t))
		}},
		"with the periodic audit": {values: []string{"audit.enabled=true"}, calls: func(t *testing.T) []string {
			return union(reviewerCalls(t), autoscalerCalls(t), auditCalls(t), recorderCalls)
		}},
		"with a custom resource with scale among extraKinds": {
			values: []string{"extraKinds[0].group=example.com,extraKinds[0].version=v1,extraKinds[0].resource=queues,extraKinds[0].subresources={scale}"},
			calls: func(t *testing.T) []string {
				return union(reviewerCalls(t), autoscalerCalls(t), customScaleCalls(t))
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(clusterRoleGrants(t, tc.values...), tc.calls(t)); diff != "" {
				t.Errorf("ClusterRole grants (-) vs calls the code makes (+):\n%s", diff)
			}
		})
	}
}

// customScaleCalls returns the calls of a review of alice's /scale of a
// custom resource, Queue team/web, whose CRD sets spec.size: the CRD (get,
// by name), the parent (get) and the namespace labels (get).
func customScaleCalls(t *testing.T) []string {
	t.Helper()
	queues := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "queues"}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": map[string]any{"name": "queues.example.com"},
		"spec": map[string]any{"group": "example.com", "versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
			"subresources": map[string]any{"scale": map[string]any{"specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size"}}}}},
	}}
	queue := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Queue", "metadata": map[string]any{"name": "web", "namespace": "team"},
		"spec": map[string]any{"size": int64(2)},
	}}
	la, err := json.Marshal(queue.Object)
	if err != nil {
		t.Fatal(err)
	}
	queue.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(la)})
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds(), namespace(), crd, queue)
	handler := webhook.NewReviewer(newPolicyEngine(t), kube.NewCluster(client, 0)).Validating()
	req := scaleRequest(t, "Queue", queues)
	resp := handler.Handle(logf.IntoContext(t.Context(), logr.Discard()), admission.Request{AdmissionRequest: req})
	// last-applied owns spec.size: alice's scale is denied, which proves
	// the review read the CRD's path.
	if resp.Allowed || resp.Result == nil || resp.Result.Code != 403 {
		t.Fatalf("scale of a Queue: %+v, want the imperative-edit denial", resp.Result)
	}
	// An apply that leaves a label kubectl label set: the removal proof's
	// dry run (patch) of a Queue.
	queueOf := func(color string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Queue", "metadata": map[string]any{"name": "web", "namespace": "team"},
			"spec": map[string]any{"size": int64(2), "color": color},
		}}
	}
	orphan := orphanApplyOf(t, queueOf, metaGVK("example.com", "v1", "Queue"), queues)
	if resp := handler.Handle(logf.IntoContext(t.Context(), logr.Discard()), admission.Request{AdmissionRequest: orphan}); resp.Result != nil && resp.Result.Code >= 400 {
		t.Fatalf("apply of a Queue: %v", resp.Result.Message)
	}
	return actions(client)
}

// recorderCalls are the events of the audit and of the webhook (on a
// denied or warned write, --admission-events): controller-runtime's event
// recorder (events.k8s.io) creates them and patches repeats, through its
// own client rather than the dynamic one.
var recorderCalls = []string{"events.k8s.io/events create", "events.k8s.io/events patch"}

// auditCalls returns the calls of one audit scan of all namespaces.
func auditCalls(t *testing.T) []string {
	t.Helper()
	objs := []runtime.Object{namespace()}
	for kind := range workloads {
		w := workload(kind, "a")
		la, err := json.Marshal(workload(kind, "b").Object)
		if err != nil {
			t.Fatal(err)
		}
		w.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(la)})
		objs = append(objs, w)
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds(), objs...)
	scanner := audit.NewScanner(client, merge.NewAnalyzer(), newPolicyEngine(t))
	report, err := scanner.Scan(t.Context(), audit.Target{})
	if err != nil {
		t.Fatalf("scanning: %v", err)
	}
	if report.Objects != len(workloads) {
		t.Fatalf("the scan saw %d objects, want %d", report.Objects, len(workloads))
	}
	return actions(client)
}

func union(lists ...[]string) []string {
	seen := map[string]bool{}
	for _, l := range lists {
		for _, s := range l {
			seen[s] = true
		}
	}
	return sortedKeys(seen)
}

var workloads = map[string]schema.GroupVersionResource{
	"Deployment":  {Group: "apps", Version: "v1", Resource: "deployments"},
	"StatefulSet": {Group: "apps", Version: "v1", Resource: "statefulsets"},
	"DaemonSet":   {Group: "apps", Version: "v1", Resource: "daemonsets"},
}

func listKinds() map[schema.GroupVersionResource]string {
	return map[schema.GroupVersionResource]string{
		{Version: "v1", Resource: "namespaces"}:                         "NamespaceList",
		{Group: "apps", Version: "v1", Resource: "replicasets"}:         "ReplicaSetList",
		{Group: "apps", Version: "v1", Resource: "controllerrevisions"}: "ControllerRevisionList",
		workloads["Deployment"]:                                         "DeploymentList", workloads["StatefulSet"]: "StatefulSetList", workloads["DaemonSet"]: "DaemonSetList",
	}
}

func namespace() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "team"}}}
}

func newPolicyEngine(t *testing.T) *policy.Engine {
	t.Helper()
	engine, err := policy.New(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return engine
}

// reviewerCalls returns "group/resource verb" of every call the Reviewer
// made, sorted and deduplicated.
func reviewerCalls(t *testing.T) []string {
	t.Helper()
	objs := []runtime.Object{namespace()}
	for kind := range workloads {
		// last-applied owns replicas: alice's scale is denied.
		w := workload(kind, "a")
		la, err := json.Marshal(w.Object)
		if err != nil {
			t.Fatal(err)
		}
		w.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(la)})
		objs = append(objs, w)
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds(), objs...)
	recorded := make(chan struct{}, 16)
	recorder := eventRecorderFunc(func() {
		select {
		case recorded <- struct{}{}:
		default:
		}
	})
	handler := webhook.NewReviewer(newPolicyEngine(t), kube.NewCluster(client, 0), webhook.WithEventRecorder(recorder)).Validating()
	for kind, gvr := range workloads {
		reqs := map[string]admissionv1.AdmissionRequest{"undo": undoRequest(t, kind, gvr), "orphan": orphanApplyRequest(t, kind, gvr)}
		if kind != "DaemonSet" { // the only one without a /scale subresource
			reqs["scale"] = scaleRequest(t, kind, gvr)
		}
		for name, req := range reqs {
			resp := handler.Handle(logf.IntoContext(t.Context(), logr.Discard()), admission.Request{AdmissionRequest: req})
			if resp.Result != nil && resp.Result.Code >= 400 && resp.Result.Code != 403 {
				t.Fatalf("%s of a %s: %v", name, kind, resp.Result.Message)
			}
			for _, w := range resp.Warnings {
				if strings.Contains(w, "could not review") {
					t.Fatalf("%s of a %s: %s", name, kind, w)
				}
			}
		}
	}
	select {
	case <-recorded: // alice's scales are denied: the webhook records events.
		return union(actions(client), recorderCalls)
	case <-time.After(5 * time.Second):
		t.Fatal("no event recorded for alice's denied scales")
		return nil
	}
}

// eventRecorderFunc is a webhook.EventRecorder that calls itself.
type eventRecorderFunc func()

func (f eventRecorderFunc) Eventf(runtime.Object, runtime.Object, string, string, string, string, ...any) {
	f()
}

// namedResources are the resources the server reads by name only, and
// the chart grants by name (resourceNames).
var namedResources = map[string]bool{"customresourcedefinitions": true}

// actions returns "group/resource verb" of every call made with client,
// followed by the name for namedResources.
func actions(client *dynamicfake.FakeDynamicClient) []string {
	seen := map[string]bool{}
	for _, a := range client.Actions() {
		gvr := a.GetResource()
		call := gvr.Group + "/" + gvr.Resource + " " + a.GetVerb()
		if namedResources[gvr.Resource] {
			call += " " + a.(clienttesting.GetAction).GetName()
		}
		seen[call] = true
	}
	return sortedKeys(seen)
}

func workload(kind, image string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": kind,
		"metadata": map[string]any{"name": "web", "namespace": "team", "uid": "u-" + kind},
		"spec": map[string]any{
			"replicas": int64(2),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": image}}},
			},
		},
	}}
}

func scaleRequest(t *testing.T, kind string, gvr schema.GroupVersionResource) admissionv1.AdmissionRequest {
	scale := func(n int64) runtime.RawExtension {
		return raw(t, map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale",
			"metadata": map[string]any{"name": "web", "namespace": "team"}, "spec": map[string]any{"replicas": n}})
	}
	return admissionv1.AdmissionRequest{
		UID: types.UID("scale-" + kind), Operation: admissionv1.Update, Name: "web", Namespace: "team", SubResource: "scale",
		Kind:     metaGVK("autoscaling", "v1", "Scale"),
		Resource: metaGVR(gvr), UserInfo: authenticationv1.UserInfo{Username: "alice"},
		Object: scale(5), OldObject: scale(2),
	}
}

// orphanApplyRequest is a client-side apply that leaves behind a label
// that kubectl label set: an orphan candidate, whose removal the Reviewer
// proves with a server-side dry run (patch).
func orphanApplyRequest(t *testing.T, kind string, gvr schema.GroupVersionResource) admissionv1.AdmissionRequest {
	t.Helper()
	return orphanApplyOf(t, func(image string) *unstructured.Unstructured { return workload(kind, image) }, metaGVK("apps", "v1", kind), gvr)
}

// orphanApplyOf is orphanApplyRequest of the object that build makes,
// whose value changes from "a" to "c".
func orphanApplyOf(t *testing.T, build func(value string) *unstructured.Unstructured, gvk metav1.GroupVersionKind, gvr schema.GroupVersionResource) admissionv1.AdmissionRequest {
	t.Helper()
	// The entries name the object's own version, as the API server
	// writes them: merge judges no orphan while an applier's entry of
	// another version owns fields the object does not place.
	apiVersion := gvk.Version
	if gvk.Group != "" {
		apiVersion = gvk.Group + "/" + gvk.Version
	}
	object := func(image, at string) map[string]any {
		w := build(image)
		// A manifest has no uid (a last-applied with the object's own uid
		// is what --save-config records, not an apply).
		manifest := build(image)
		unstructured.RemoveNestedField(manifest.Object, "metadata", "uid")
		la, err := json.Marshal(manifest.Object)
		if err != nil {
			t.Fatal(err)
		}
		w.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(la)})
		w.SetLabels(map[string]string{"debug": "1"})
		w.SetManagedFields([]metav1.ManagedFieldsEntry{
			{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: apiVersion,
				Time: &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, FieldsType: "FieldsV1",
				FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{"f:replicas":{}}}`)},
			{Manager: "kubectl-label", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: apiVersion,
				Time: &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC)}, FieldsType: "FieldsV1",
				FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{".":{},"f:debug":{}}}}`)},
		})
		if at != "" {
			mfs := w.GetManagedFields()
			mfs[0].Time = &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 2, 0, time.UTC)}
			w.SetManagedFields(mfs)
		}
		return w.Object
	}
	return admissionv1.AdmissionRequest{
		UID: types.UID("orphan-" + gvk.Kind), Operation: admissionv1.Update, Name: "web", Namespace: "team",
		Kind: gvk, Resource: metaGVR(gvr), UserInfo: authenticationv1.UserInfo{Username: "alice"},
		Options: runtime.RawExtension{Raw: []byte(`{"kind":"UpdateOptions","apiVersion":"meta.k8s.io/v1","fieldManager":"kubectl-client-side-apply"}`)},
		Object:  raw(t, object("c", "later")), OldObject: raw(t, object("a", "")),
	}
}

// undoRequest changes the pod template without a field manager, as
// kubectl rollout undo does.
func undoRequest(t *testing.T, kind string, gvr schema.GroupVersionResource) admissionv1.AdmissionRequest {
	return admissionv1.AdmissionRequest{
		UID: types.UID("undo-" + kind), Operation: admissionv1.Update, Name: "web", Namespace: "team",
		Kind: metaGVK("apps", "v1", kind), Resource: metaGVR(gvr), UserInfo: authenticationv1.UserInfo{Username: "alice"},
		Object: raw(t, workload(kind, "b").Object), OldObject: raw(t, workload(kind, "a").Object),
	}
}

func raw(t *testing.T, obj map[string]any) runtime.RawExtension {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: b}
}

// clusterRoleGrants renders the chart in url mode with values and the
// pinned helm, and returns "group/resource verb" of every rule of its
// ClusterRole, followed by the name for each name of a rule with
// resourceNames.
func clusterRoleGrants(t *testing.T, values ...string) []string {
	t.Helper()
	binDir := controlplane.RequireTools(t, "helm")
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"template", "ah", filepath.Join(root, "charts", "apply-hygiene"),
		"--namespace", "apply-hygiene", "--set", "webhook.url=https://127.0.0.1:9443", "--set", "webhook.caBundle=Zm9v"}
	for _, v := range values {
		args = append(args, "--set", v)
	}
	cmd := exec.CommandContext(t.Context(), filepath.Join(binDir, "helm"), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr.String())
	}
	granted := map[string]bool{}
	found := false
	for _, doc := range strings.Split(stdout.String(), "\n---\n") {
		var cr rbacv1.ClusterRole
		if err := yaml.Unmarshal([]byte(doc), &cr); err != nil || cr.Kind != "ClusterRole" {
			continue
		}
		found = true
		for _, r := range cr.Rules {
			if len(r.NonResourceURLs) > 0 {
				t.Errorf("rule %+v: the server calls no non-resource URL", r)
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					if namedResources[res] != (len(r.ResourceNames) > 0) {
						t.Errorf("rule %+v: the server reads %s by name only", r, res)
					}
					for _, v := range r.Verbs {
						if len(r.ResourceNames) == 0 {
							granted[g+"/"+res+" "+v] = true
						}
						for _, name := range r.ResourceNames {
							granted[g+"/"+res+" "+v+" "+name] = true
						}
					}
				}
			}
		}
	}
	if !found {
		t.Fatalf("helm template rendered no ClusterRole:\n%s", stdout.String())
	}
	return sortedKeys(granted)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func metaGVK(group, version, kind string) metav1.GroupVersionKind {
	return metav1.GroupVersionKind{Group: group, Version: version, Kind: kind}
}

func metaGVR(gvr schema.GroupVersionResource) metav1.GroupVersionResource {
	return metav1.GroupVersionResource{Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource}
}
