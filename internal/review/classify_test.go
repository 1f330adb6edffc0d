package review

import (
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// A write that changes only last-applied (and what the server maintains)
// is a hand-over of fields; any other change is not.
func TestOnlyLastAppliedChanged(t *testing.T) {
	const old = `{"apiVersion":"v1","kind":"ConfigMap",
	  "metadata":{"name":"c","resourceVersion":"1","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}","team":"a"}},
	  "data":{"k":"v"}}`
	tests := map[string]struct {
		new  string
		want bool
	}{
		"last-applied and bookkeeping": {want: true, new: `{"apiVersion":"v1","kind":"ConfigMap",
		  "metadata":{"name":"c","resourceVersion":"2","generation":2,"managedFields":[{}],"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"data\":{}}","team":"a"}},
		  "data":{"k":"v"},"status":{"x":1}}`},
		"last-applied removed": {want: true, new: `{"apiVersion":"v1","kind":"ConfigMap",
		  "metadata":{"name":"c","annotations":{"team":"a"}},"data":{"k":"v"}}`},
		"another annotation": {new: `{"apiVersion":"v1","kind":"ConfigMap",
		  "metadata":{"name":"c","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}","team":"b"}},"data":{"k":"v"}}`},
		"annotations gone": {new: `{"apiVersion":"v1","kind":"ConfigMap",
		  "metadata":{"name":"c"},"data":{"k":"v"}}`},
		"a label": {new: `{"apiVersion":"v1","kind":"ConfigMap",
		  "metadata":{"name":"c","labels":{"a":"b"},"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}","team":"a"}},"data":{"k":"v"}}`},
		"data": {new: `{"apiVersion":"v1","kind":"ConfigMap",
		  "metadata":{"name":"c","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}","team":"a"}},"data":{"k":"w"}}`},
		"data dropped": {new: `{"apiVersion":"v1","kind":"ConfigMap",
		  "metadata":{"name":"c","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}","team":"a"}}}`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := onlyLastAppliedChanged(object(t, old), object(t, tc.new)); got != tc.want {
				t.Errorf("onlyLastAppliedChanged = %v, want %v", got, tc.want)
			}
		})
	}
}

func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
		t.Fatal(err)
	}
	return obj
}

// Only Kubernetes' own components and kube-controller-manager's service
// accounts, by name, are controllers; other system: names are people
// (issue 12, item 7), and other kube-system service accounts are service
// accounts like any other (issue 25): a third-party controller or a
// GitOps tool installed there.
func TestIsController(t *testing.T) {
	tests := map[string]struct {
		user string
		want bool
	}{
		"the controller manager":           {user: "system:kube-controller-manager", want: true},
		"the scheduler":                    {user: "system:kube-scheduler", want: true},
		"kube-proxy":                       {user: "system:kube-proxy", want: true},
		"the API server's loopback client": {user: "system:apiserver", want: true},
		"a kubelet":                        {user: "system:node:worker-1", want: true},
		"a kube-system controller's service account": {user: "system:serviceaccount:kube-system:deployment-controller", want: true},
		"the HPA writing /scale":                     {user: "system:serviceaccount:kube-system:horizontal-pod-autoscaler", want: true},
		"OpenShift's system:admin is a person":       {user: "system:admin"},
		"system:anonymous is no component":           {user: "system:anonymous"},
		"an unknown system: name is no component":    {user: "system:kube-controller-manager-impostor"},
		"a node name needs the node: prefix":         {user: "system:nodes"},
		"a service account elsewhere":                {user: "system:serviceaccount:ci:deployer"},
		"a kube-system look-alike namespace":         {user: "system:serviceaccount:kube-system-extra:robot"},
		"Argo CD's argocd-manager in kube-system":    {user: "system:serviceaccount:kube-system:argocd-manager"},
		"a third-party controller in kube-system":    {user: "system:serviceaccount:kube-system:cluster-autoscaler"},
		"the garbage collector":                      {user: "system:serviceaccount:kube-system:generic-garbage-collector", want: true},
		"a configured controller":                    {user: "system:serviceaccount:ops:robot", want: true},
		"a person":                                   {user: "alice"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := isController(authenticationv1.UserInfo{Username: tc.user}, map[string]bool{"system:serviceaccount:ops:robot": true}); got != tc.want {
				t.Errorf("isController(%q) = %v, want %v", tc.user, got, tc.want)
			}
		})
	}
}

// A last-applied is proof of what kubectl apply owns unless managedFields
// says it was written only by this write's own manager, not kubectl's,
// which moves fields away from it (issue 25: a Helm chart's frozen
// last-applied, carried by every helm upgrade). Another writer's edit is
// judged against it as before (the chart's own helm test relies on that).
func TestLastAppliedIsKubectls(t *testing.T) {
	withWriters := func(managers ...string) *unstructured.Unstructured {
		obj := object(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}}}`)
		var entries []any
		for _, m := range managers {
			entries = append(entries, map[string]any{"manager": m, "operation": "Update", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{"f:metadata": map[string]any{"f:annotations": map[string]any{"f:kubectl.kubernetes.io/last-applied-configuration": map[string]any{}}}}})
		}
		if entries != nil {
			obj.Object["metadata"].(map[string]any)["managedFields"] = entries
		}
		return obj
	}
	tests := map[string]struct {
		writers []string
		manager string
		want    bool
	}{
		"kubectl apply wrote it":               {writers: []string{"kubectl-client-side-apply"}, manager: "kubectl-edit", want: true},
		"nobody owns it":                       {manager: "kubectl-edit", want: true},
		"Argo CD applied client-side":          {writers: []string{"argocd-controller"}, manager: "kubectl-set", want: true},
		"Helm installed it, Helm upgrades":     {writers: []string{"helm"}, manager: "helm"},
		"Helm installed it, a person edits":    {writers: []string{"helm"}, manager: "kubectl-edit", want: true},
		"Flux's helm-controller upgrades":      {writers: []string{"helm-controller"}, manager: "helm-controller"},
		"a tool writes away from its own copy": {writers: []string{"deployer"}, manager: "deployer"},
		"kubectl apply's own name is no pass":  {writers: []string{"kubectl-client-side-apply"}, manager: "kubectl-client-side-apply", want: true},
		"Helm and kubectl apply both wrote it": {writers: []string{"helm", "kubectl-client-side-apply"}, manager: "helm", want: true},
		"another tool's copy, a person's edit": {writers: []string{"deployer"}, manager: "kubectl-edit", want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w := write{old: withWriters(tc.writers...), manager: tc.manager}
			if got := lastAppliedIsKubectls(w); got != tc.want {
				t.Errorf("lastAppliedIsKubectls = %v, want %v", got, tc.want)
			}
		})
	}
}
