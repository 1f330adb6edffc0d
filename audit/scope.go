package audit

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// IgnoreLabel is the namespace label (any value) that keeps apply-hygiene
// out of a namespace: the chart's webhooks never see its writes, and no
// audit fix writes there.
const IgnoreLabel = "apply-hygiene.io/ignore"

// SystemNamespace is never written by a fix: the chart's webhooks never
// review it either.
const SystemNamespace = "kube-system"

// FixScope says where and for which decisions a scan attaches fixes: only
// to objects the webhook would review, and only for decisions whose action
// writes. docs/audit.md states the rules.
type FixScope struct {
	// ExcludedNamespaces are never written, besides SystemNamespace: the
	// chart passes its release namespace and excludeNamespaces, the
	// namespaces its webhooks' namespaceSelector leaves out.
	ExcludedNamespaces []string
	// ObjectSelector, when set, is the webhooks' objectSelector (the
	// chart's webhook.objectSelector): an object whose labels it does not
	// match is never written. Default: nil, every object.
	ObjectSelector labels.Selector
	// Person says the fix is a person's explicit command (kubectl hygiene
	// audit --fix): a finding whose action is warn or deny is fixed too.
	// Without it only repair and prune, and warn where the rule's auditFix
	// knob says so, are. dryrun is never fixed.
	Person bool
	// IgnoredNamespaces lets a person's fix write in the namespaces that
	// the ignore label, SystemNamespace or ExcludedNamespaces keep out
	// (kubectl hygiene audit --fix-ignored-namespaces).
	IgnoredNamespaces bool
}

// WithFixScope sets where the scan's findings get fixes. Default: the
// zero FixScope, the periodic audit's: repair, prune and opted-in warn
// decisions, outside kube-system and ignored namespaces.
func WithFixScope(s FixScope) Option {
	return func(o *options) { o.scope = s }
}

// namespaceReason is why no fix may write in namespace ns whose labels
// are labels (read is false when they could not be read), "" when one
// may. Cluster-scoped objects (ns "") are in scope.
func (s FixScope) namespaceReason(ns string, labels map[string]string, read bool) string {
	switch {
	case ns == "":
		return ""
	case !read:
		return "the labels of namespace " + ns + " could not be read"
	case s.IgnoredNamespaces:
		return ""
	case ns == SystemNamespace || slices.Contains(s.ExcludedNamespaces, ns):
		return "namespace " + ns + " is excluded from apply-hygiene"
	}
	if _, ok := labels[IgnoreLabel]; ok {
		return "namespace " + ns + " is labelled " + IgnoreLabel
	}
	return ""
}

// objectReason is why no fix may write obj, "" when one may: the
// webhooks' objectSelector does not match its labels.
func (s FixScope) objectReason(obj *unstructured.Unstructured) string {
	if s.ObjectSelector == nil || s.ObjectSelector.Matches(labels.Set(obj.GetLabels())) {
		return ""
	}
	return "its labels do not match the webhooks' objectSelector"
}

// actionReason is why no fix may write the finding of decision d, "" when
// one may.
func (s FixScope) actionReason(d policy.Decision) string {
	switch d.Action {
	case policy.ActionRepair, policy.ActionPrune:
		return ""
	case policy.ActionDryRun:
		return "its action is dryrun, which only records"
	case policy.ActionWarn:
		if s.Person || d.AuditFix {
			return ""
		}
		return "its action is warn, which only reports (the rule's auditFix lets the audit fix it)"
	case policy.ActionDeny:
		if s.Person {
			return ""
		}
	}
	return "its action is " + string(d.Action)
}

// undoReason is why the periodic audit may not write fix, "" when it may:
// an orphan that the entry of kubectl rollout undo owns (an Update by
// kubectl, which sends no field manager) was restored by an undo that the
// audit could not prove (its revision is gone, or another writer changed
// the template since), and removing it would take back part of the undo,
// rolling the pods to a template no revision had. A person's kubectl
// hygiene audit --fix, which shows its diff first, may remove it.
func (s FixScope) undoReason(fix *Fix) string {
	if s.Person || fix.Orphan == nil {
		return ""
	}
	for _, o := range fix.Orphan.Owners {
		if merge.IsUndoEntry(o) {
			return "kubectl rollout undo may have restored it (field manager " + o.Manager + "): removing it would take back part of the undo; remove it with the printed command or kubectl hygiene audit --fix if the undo did not mean it"
		}
	}
	return ""
}
