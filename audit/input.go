package audit

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Input is the policy input for a stored object obj that merge analyzed
// as an (AnalyzeLive, plus the rollback when its template is an older
// revision): no request beyond the object's name, the classification
// "audit", and the labels of its namespace (nil: none). A scan evaluates
// it for every object; kubectl hygiene explain for the object it explains.
// resource is obj's resource, whose group and name the messages' commands
// name the object by; the zero value when unknown.
func Input(obj *unstructured.Unstructured, resource schema.GroupResource, an *merge.Analysis, namespaceLabels map[string]string) *policy.Input {
	if namespaceLabels == nil {
		namespaceLabels = map[string]string{}
	}
	in := &policy.Input{
		Request: policy.Request{
			Object: merge.RefOf(obj),
			User:   policy.User{Groups: []string{}},
		},
		Namespace:      policy.Namespace{Name: obj.GetNamespace(), Labels: namespaceLabels},
		Classification: Classification,
		Analysis:       an,
	}
	if resource.Resource != "" {
		in.Request.Resource = &policy.GroupResource{Group: resource.Group, Resource: resource.Resource}
	}
	return in
}
