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

// WebhookScope is what the installed chart's validating webhook
// configuration sends its webhooks: their rules, namespaceSelector and
// objectSelector. diff uses it so that it predicts nothing for a write the
// API server never sends them (a Secret under the chart's default kinds,
// workloads; an excluded namespace).
type WebhookScope struct {
	// Name is the configuration's name.
	Name     string
	webhooks []admissionregistrationv1.ValidatingWebhook
}

// WebhookScope reads the installed chart's ValidatingWebhookConfiguration:
// of those labelled app.kubernetes.io/name=apply-hygiene, the one whose
// webhooks call a Service in namespace, or else the only one whose
// webhooks call a URL (the chart in URL mode). nil when none can be read or told apart (the
// user may not list webhook configurations): diff then judges every write
// as the webhooks would if they saw it.
func (c *Cluster) WebhookScope(ctx context.Context, namespace string) *WebhookScope {
	list, err := c.dynamic.Resource(validatingWebhooksGVR).List(ctx, metav1.ListOptions{LabelSelector: chartNameLabel + "=" + chartName})
	if err != nil {
		return nil
	}
	var urls, inNamespace []*admissionregistrationv1.ValidatingWebhookConfiguration
	for i := range list.Items {
		cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, cfg); err != nil {
			return nil
		}
		switch {
		case slices.ContainsFunc(cfg.Webhooks, func(w admissionregistrationv1.ValidatingWebhook) bool {
			return w.ClientConfig.Service != nil && w.ClientConfig.Service.Namespace == namespace
		}):
			inNamespace = append(inNamespace, cfg)
		case !slices.ContainsFunc(cfg.Webhooks, func(w admissionregistrationv1.ValidatingWebhook) bool { return w.ClientConfig.Service != nil }):
			urls = append(urls, cfg)
		}
	}
	switch {
	case len(inNamespace) == 1:
		return &WebhookScope{Name: inNamespace[0].Name, webhooks: inNamespace[0].Webhooks}
	case len(inNamespace) == 0 && len(urls) == 1:
		return &WebhookScope{Name: urls[0].Name, webhooks: urls[0].Webhooks}
	}
	return nil
}

// Reviews reports whether the API server calls a webhook of s for the
// UPDATE of old to new, an object of resource gvr, in a namespace with
// nsLabels: a rule of the webhook matches, and so do its
// namespaceSelector and objectSelector. The webhooks' matchConditions are
// not evaluated (they keep away writes without last-applied, which no
// apply is), so it errs toward true, never toward silence. The API
// server's own matchers (k8s.io/apiserver's predicates) are not used:
// their package brings the CEL interpreter into the kubectl plugin for
// these few comparisons.
func (s *WebhookScope) Reviews(old, new *unstructured.Unstructured, gvr schema.GroupVersionResource, nsLabels map[string]string) bool {
	for _, w := range s.webhooks {
		equivalent := w.MatchPolicy == nil || *w.MatchPolicy == admissionregistrationv1.Equivalent
		if slices.ContainsFunc(w.Rules, func(r admissionregistrationv1.RuleWithOperations) bool {
			return ruleMatches(r, gvr, new.GetNamespace(), equivalent)
		}) &&
			namespaceMatches(w.NamespaceSelector, old, nsLabels) && objectMatches(w.ObjectSelector, old, new) {
			return true
		}
	}
	return false
}

// ruleMatches is the API server's rule match for an UPDATE of a resource
// without subresource (k8s.io/apiserver's predicates/rules). With the
// Equivalent match policy, the API server also sends a write of another
// version of the resource, converted: the version is not compared.
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
// namespaced object's namespace labels, a Namespace's own labels, and
// any other cluster-scoped object always.
func namespaceMatches(sel *metav1.LabelSelector, old *unstructured.Unstructured, nsLabels map[string]string) bool {
	switch {
	case old.GetNamespace() != "":
		return selects(sel, nsLabels)
	case old.GetKind() == "Namespace" && old.GroupVersionKind().Group == "":
		return selects(sel, old.GetLabels())
	}
	return true
}

// objectMatches is the API server's objectSelector match for an UPDATE:
// the old or the new object's labels.
func objectMatches(sel *metav1.LabelSelector, old, new *unstructured.Unstructured) bool {
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
