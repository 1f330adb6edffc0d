package audit

import (
	"cmp"
	"context"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Target says what a scan lists.
type Target struct {
	// Namespace limits the scan to one namespace; "" scans all.
	Namespace string
	// Resources are the resources to list. Default: DefaultResources.
	Resources []schema.GroupVersionResource
}

// Scanner lists objects, analyzes them and asks the policies about them.
// It is safe for concurrent use; each Scan has its own caches.
type Scanner struct {
	client    dynamic.Interface
	analyzer  *merge.Analyzer
	evaluator Evaluator
	opts      options
}

// NewScanner returns a Scanner that lists with client, analyzes with
// analyzer and decides with evaluator (normally a *policy.Engine).
func NewScanner(client dynamic.Interface, analyzer *merge.Analyzer, evaluator Evaluator, opts ...Option) *Scanner {
	o := options{pageSize: DefaultPageSize}
	for _, opt := range opts {
		opt(&o)
	}
	// The scanner reads revisions and namespace labels through the same
	// cluster reader as the webhook, on its own client.
	o.cluster = kube.NewCluster(client, 0)
	return &Scanner{client: client, analyzer: analyzer, evaluator: evaluator, opts: o}
}

// Scan lists the target's objects page by page and returns the findings.
// It stops at the first list or policy error; an object that cannot be
// analyzed is recorded in Report.Errors and the scan goes on.
func (s *Scanner) Scan(ctx context.Context, t Target) (*Report, error) {
	resources := t.Resources
	if len(resources) == 0 {
		resources = DefaultResources()
	}
	sc := &scan{Scanner: s, report: &Report{Findings: []Finding{}, Namespaces: map[string]int{}}, labels: map[string]namespaceLabels{}}
	for _, gvr := range resources {
		if err := sc.resource(ctx, gvr, t.Namespace); err != nil {
			return nil, err
		}
	}
	sortFindings(sc.report.Findings)
	return sc.report, nil
}

// scan is the state of one Scan.
type scan struct {
	*Scanner
	report *Report
	// labels caches namespace labels for the scan.
	labels map[string]namespaceLabels
}

func (sc *scan) resource(ctx context.Context, gvr schema.GroupVersionResource, namespace string) error {
	var lister dynamic.ResourceInterface = sc.client.Resource(gvr)
	if namespace != "" {
		lister = sc.client.Resource(gvr).Namespace(namespace)
	}
	opts := metav1.ListOptions{Limit: sc.opts.pageSize}
	for {
		list, err := lister.List(ctx, opts)
		if err != nil {
			return fmt.Errorf("listing %s: %w", resourceName(gvr), err)
		}
		for i := range list.Items {
			if err := sc.object(ctx, gvr, &list.Items[i]); err != nil {
				return err
			}
		}
		if sc.opts.progress != nil {
			sc.opts.progress(Progress{Resource: gvr, Objects: sc.report.Objects, Findings: len(sc.report.Findings)})
		}
		next := list.GetContinue()
		if next == "" {
			return nil
		}
		if next == opts.Continue {
			return fmt.Errorf("listing %s: the server sent continue token %q twice", resourceName(gvr), next)
		}
		opts.Continue = next
	}
}

// object scans one object. It returns only errors that end the scan.
func (sc *scan) object(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
	sc.report.Objects++
	sc.report.Namespaces[obj.GetNamespace()]++
	if !audited(obj) {
		return nil
	}
	findings, err := sc.findings(ctx, gvr, obj)
	sc.report.Findings = append(sc.report.Findings, findings...)
	return err
}

// findings analyzes obj and returns its findings, each with the fix that
// merge's analysis supports where the scan's FixScope allows one. It
// records in the report the errors that leave the scan going and returns
// only those that end it. A panic is the object's error: the audit runs in
// the webhook server, which the panic would end.
func (sc *scan) findings(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (fs []Finding, err error) {
	defer func() {
		if p := recover(); p != nil {
			logr.FromContextOrDiscard(ctx).Error(fmt.Errorf("%v", p), "analyzing an object panicked; the scan goes on without it",
				"object", merge.RefOf(obj), "stack", string(debug.Stack()))
			sc.report.Errors = append(sc.report.Errors, ObjectError{Object: merge.RefOf(obj), Err: fmt.Errorf("panic: %v [recovered]", p)})
			fs, err = nil, nil
		}
	}()
	an, err := sc.analyzer.AnalyzeLive(obj)
	if err != nil {
		sc.report.Errors = append(sc.report.Errors, ObjectError{Object: merge.RefOf(obj), Err: err})
		return nil, nil
	}
	sc.proveOrphans(ctx, gvr, obj, an)
	if err := sc.rollback(ctx, obj, an); err != nil {
		// Without the revisions the rest of the analysis still holds.
		sc.report.Errors = append(sc.report.Errors, ObjectError{Object: merge.RefOf(obj), Err: err})
	}
	labels, read := sc.namespaceLabels(ctx, obj.GetNamespace())
	in := Input(obj, gvr.GroupResource(), an, labels)
	decisions, err := sc.evaluator.Evaluate(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("evaluating policies for %s %s: %w", obj.GetKind(), objectName(in.Request.Object), err)
	}
	nsReason := cmp.Or(sc.opts.scope.namespaceReason(obj.GetNamespace(), labels, read), sc.opts.scope.objectReason(obj))
	return findingsOf(decisions, obj, gvr, sc.opts.scope, nsReason), nil
}

// rollback sets an.Rollback when the object's pod template is an older
// revision than the one its last-applied describes, put back by a rollout
// undo that managedFields prove (merge.StaleRollback): a hand edit that
// restores the template stays the edit it is.
func (sc *scan) rollback(ctx context.Context, obj *unstructured.Unstructured, an *merge.Analysis) error {
	if !merge.MayHaveStaleLastApplied(obj, an) {
		return nil
	}
	revisions, err := sc.opts.cluster.Revisions(ctx, obj)
	if err != nil {
		return err
	}
	rb, err := sc.analyzer.StaleRollback(obj, revisions)
	if err != nil {
		return err
	}
	an.Rollback = rb
	return nil
}

// namespaceLabels returns the labels of a namespace and whether they
// could be read; when they could not, the enforcement label does not
// apply, and no fix writes there (FixScope).
func (sc *scan) namespaceLabels(ctx context.Context, name string) (map[string]string, bool) {
	if name == "" {
		return map[string]string{}, true
	}
	if cached, ok := sc.labels[name]; ok {
		return cached.labels, cached.read
	}
	labels, err := sc.opts.cluster.NamespaceLabels(ctx, name)
	if err != nil {
		logr.FromContextOrDiscard(ctx).V(1).Info("reading namespace labels failed; the enforcement label does not apply and nothing is fixed there", "namespace", name, "error", err.Error())
	}
	if labels == nil {
		labels = map[string]string{}
	}
	sc.labels[name] = namespaceLabels{labels: labels, read: err == nil}
	return labels, err == nil
}

// namespaceLabels are a namespace's labels as one scan read them.
type namespaceLabels struct {
	labels map[string]string
	// read is false when they could not be read.
	read bool
}

// audited reports whether obj is apply's business: objects that another
// object controls (ReplicaSets of a Deployment) are its controller's,
// objects being deleted (a deletionTimestamp, finalizers pending) have no
// next apply, as admission does not review their writes either, and
// objects without last-applied that no person made with kubectl (Helm's,
// an operator's, server-side apply's) never were client-side apply's.
func audited(obj *unstructured.Unstructured) bool {
	if metav1.GetControllerOfNoCopy(obj) != nil || obj.GetDeletionTimestamp() != nil {
		return false
	}
	if _, ok := obj.GetAnnotations()[merge.LastAppliedAnnotation]; ok {
		return true
	}
	for _, mf := range obj.GetManagedFields() {
		if mf.Operation == metav1.ManagedFieldsOperationUpdate && merge.IsKubectlManager(mf.Manager) {
			return true
		}
	}
	return false
}

// findingsOf turns decisions into findings, one per path, each with the
// fix of its decision (fixOf), where scope allows it: nsReason
// says why nothing in the object's namespace may be fixed ("" when it
// may), scope which actions write.
func findingsOf(decisions []policy.Decision, obj *unstructured.Unstructured, gvr schema.GroupVersionResource, scope FixScope, nsReason string) []Finding {
	ref := merge.RefOf(obj)
	var out []Finding
	for _, d := range decisions {
		paths := d.Paths
		if len(paths) == 0 {
			paths = []string{""}
		}
		for _, p := range paths {
			f := Finding{Rule: d.Rule, Action: d.Action, Path: p, Message: d.Message, Command: d.Command, Object: ref, UID: obj.GetUID(), Resource: gvr}
			f.Fix, f.NoFix = fixOf(d, obj)
			if f.Fix != nil {
				if reason := cmp.Or(nsReason, scope.actionReason(d)); reason != "" {
					f.Fix, f.NoFix = nil, reason
				}
			}
			out = append(out, f)
		}
	}
	return out
}

func sortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(a.Object.Namespace, b.Object.Namespace),
			cmp.Compare(a.Object.Kind, b.Object.Kind),
			cmp.Compare(a.Object.Name, b.Object.Name),
			cmp.Compare(a.Rule, b.Rule),
			cmp.Compare(a.Path, b.Path),
		)
	})
}

// resourceName is "deployments.apps" or "pods".
func resourceName(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Resource
	}
	return gvr.Resource + "." + gvr.Group
}
