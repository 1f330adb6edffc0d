package main

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/audit"
)

// auditFixScope is where --audit-fix may write: outside kube-system,
// --namespace and --exclude-namespaces, on objects that --object-selector
// matches (audit.FixScope).
func (o *Options) auditFixScope() (audit.FixScope, error) {
	scope := audit.FixScope{ExcludedNamespaces: append([]string{o.Namespace}, o.ExcludeNamespaces...)}
	if o.ObjectSelector == "" {
		return scope, nil
	}
	var ls metav1.LabelSelector
	if err := json.Unmarshal([]byte(o.ObjectSelector), &ls); err != nil {
		return scope, fmt.Errorf("--object-selector must be a label selector in JSON ({\"matchLabels\": …, \"matchExpressions\": […]}): %w", err)
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return scope, fmt.Errorf("--object-selector: %w", err)
	}
	scope.ObjectSelector = sel
	return scope, nil
}
