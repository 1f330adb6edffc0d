package cluster

import (
	"context"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var validatingWebhooksGVR = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}

// ValidatingWebhookName is the name of the chart's validating webhook in
// its ValidatingWebhookConfiguration, whatever the release and its name
// overrides.
const ValidatingWebhookName = "validate.apply-hygiene.io"

// WebhookScope is what the API server sends apply-hygiene's validating
// webhooks: the rules, namespaceSelector and objectSelector of every
// webhook named ValidatingWebhookName, of every installation. diff uses it
// so that it predicts nothing for a write the API server never sends them
// (a Secret under the chart's default kinds, workloads; an excluded
// namespace).
type WebhookScope struct {
	// Names are the configurations' names, sorted.
	Names    []string
	webhooks []admissionregistrationv1.ValidatingWebhook
	// labels reads a namespace's labels; false when they cannot be read.
	labels func(ctx context.Context, name string) (map[string]string, bool)
}

// WebhookScope reads the ValidatingWebhookConfigurations that hold
// apply-hygiene's validating webhook (ValidatingWebhookName). nil when
// none does or they cannot be read (the user may not list webhook
// configurations): diff then judges every write as the webhooks would if
// they saw it.
func (c *Cluster) WebhookScope(ctx context.Context) *WebhookScope {
	list, err := c.dynamic.Resource(validatingWebhooksGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	s := &WebhookScope{labels: c.namespaceLabels}
	for i := range list.Items {
		cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, cfg); err != nil {
			return nil
		}
		for _, w := range cfg.Webhooks {
			if w.Name == ValidatingWebhookName {
				s.webhooks = append(s.webhooks, w)
				s.Names = append(s.Names, cfg.Name)
			}
		}
	}
	if len(s.webhooks) == 0 {
		return nil
	}
	slices.Sort(s.Names)
	s.Names = slices.Compact(s.Names)
	return s
}

// Reviews reports whether the API server may call one of s's webhooks for
// the UPDATE of old to new, an object of resource gvr: a rule of the
// webhook matches, and so do its namespaceSelector and objectSelector.
// Where it cannot tell, it says true, never silence: the webhooks'
// matchConditions are not evaluated (they keep away writes without
// last-applied, which no apply is), a namespace whose labels cannot be
// read matches, and so does an objectSelector that a label added by a
// mutating webhook could match (one that asks for a label: In, Exists).
// The API server's own matchers (k8s.io/apiserver's predicates) are not
// used: their package brings the CEL interpreter into the kubectl plugin
// for these few comparisons.
func (s *WebhookScope) Reviews(ctx context.Context, old, new *unstructured.Unstructured, gvr schema.GroupVersionResource) bool {
	for _, w := range s.webhooks {
		equivalent := w.MatchPolicy == nil || *w.MatchPolicy == admissionregistrationv1.Equivalent
		if slices.ContainsFunc(w.Rules, func(r admissionregistrationv1.RuleWithOperations) bool {
			return ruleMatches(r, gvr, old.GetNamespace(), equivalent)
		}) && s.namespaceMatches(ctx, w.NamespaceSelector, old, new) && objectMatches(w.ObjectSelector, old, new) {
			return true
		}
	}
	return false
}

// ruleMatches is the API server's rule match for an UPDATE of a resource
// without subresource in namespace (k8s.io/apiserver's predicates/rules).
// With the Equivalent match policy, the API server also sends a write of
// another version of the resource, converted: the version is not
// compared.
func ruleMatches(r admissionregistrationv1.RuleWithOperations, gvr schema.GroupVersionResource, namespace string, equivalent bool) bool {
	anyOf := func(list []string, v string) bool { return slices.Contains(list, "*") || slices.Contains(list, v) }
	if !slices.ContainsFunc(r.Operations, func(op admissionregistrationv1.OperationType) bool {
		return op == admissionregistrationv1.OperationAll || op == admissionregistrationv1.Update
	}) {
		return false
	}
	if !anyOf(r.APIGroups, gvr.Group) || !equivalent && !anyOf(r.APIVersions, gvr.Version) {
		return false
	}
	if !slices.ContainsFunc(r.Resources, func(res string) bool {
		return res == "*" || res == "*/*" || res == gvr.Resource || res == gvr.Resource+"/*"
	}) {
		return false
	}
	switch {
	case r.Scope == nil || *r.Scope == admissionregistrationv1.AllScopes:
		return true
	case *r.Scope == admissionregistrationv1.ClusterScope:
		return namespace == ""
	default:
		return namespace != ""
	}
}

// namespaceMatches is the API server's namespaceSelector match: a
// namespaced object's namespace labels (a match when they cannot be
// read), a Namespace's own labels as the write leaves them, and any other
// cluster-scoped object always.
func (s *WebhookScope) namespaceMatches(ctx context.Context, sel *metav1.LabelSelector, old, new *unstructured.Unstructured) bool {
	switch {
	case old.GetNamespace() != "":
		set, ok := s.labels(ctx, old.GetNamespace())
		return !ok || selects(sel, set)
	case old.GetKind() == "Namespace" && old.GroupVersionKind().Group == "":
		return selects(sel, new.GetLabels())
	}
	return true
}

// objectMatches is the API server's objectSelector match for an UPDATE:
// the old or the new object's labels. A selector that asks for a label
// matches whatever the labels: a mutating webhook may add it before the
// API server calls the validating one.
func objectMatches(sel *metav1.LabelSelector, old, new *unstructured.Unstructured) bool {
	if sel != nil && (len(sel.MatchLabels) > 0 || slices.ContainsFunc(sel.MatchExpressions, func(r metav1.LabelSelectorRequirement) bool {
		return r.Operator == metav1.LabelSelectorOpIn || r.Operator == metav1.LabelSelectorOpExists
	})) {
		return true
	}
	return selects(sel, old.GetLabels()) || selects(sel, new.GetLabels())
}

// selects reports whether sel selects set; a nil selector selects
// everything, and an invalid one (which the API server refuses to store)
// too.
func selects(sel *metav1.LabelSelector, set map[string]string) bool {
	if sel == nil {
		return true
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return true
	}
	return s.Matches(labels.Set(set))
}
