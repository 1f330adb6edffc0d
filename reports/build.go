package reports

import (
	"slices"
	"time"

	v1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// Source is the source of every report and result, and the field manager
// that writes them.
const Source = "apply-hygiene"

// The result property keys.
const (
	// PropertyPath is the finding's field path, in kubectl's notation.
	PropertyPath = "path"
	// PropertyAction is the rule's configured action: deny, warn, dryrun,
	// repair or prune.
	PropertyAction = "action"
	// PropertyFix is the command that fixes the finding, when its message
	// names one (audit.Finding.Command).
	PropertyFix = "fix"
)

// Report is one policy report before it is written, in the form shared
// by both formats: their results and summaries have the same fields.
type Report struct {
	// Namespace is the report's namespace; "" is the cluster report.
	Namespace string
	// Results are the kept results, in the audit's order of findings.
	Results []v1alpha1.ReportResult
	// Summary counts every finding (fail, warn, skip), dropped ones too,
	// and as pass the objects scanned in the namespace without a finding.
	Summary v1alpha1.ReportSummary
	// Dropped counts the findings left out of Results by the Limits.
	Dropped int
}

// Build turns an audit report, of a scan that finished at scanned, into
// policy reports: one per namespace that has findings or is in existing
// (the namespaces that already hold a report of apply-hygiene's; "" for
// the cluster report), so that a report whose findings are gone is
// emptied, not left behind. The cluster report ("" namespace) comes first,
// then the namespaces in order.
func Build(r *audit.Report, scanned time.Time, existing []string, limits Limits) []Report {
	limits = limits.withDefaults()
	byNamespace := map[string][]audit.Finding{}
	for _, ns := range existing {
		byNamespace[ns] = nil
	}
	for _, f := range r.Findings {
		byNamespace[f.Object.Namespace] = append(byNamespace[f.Object.Namespace], f)
	}
	namespaces := make([]string, 0, len(byNamespace))
	for ns := range byNamespace {
		namespaces = append(namespaces, ns)
	}
	slices.Sort(namespaces)
	ts := metav1.Timestamp{Seconds: scanned.Unix(), Nanos: int32(scanned.Nanosecond())}
	out := make([]Report, 0, len(namespaces))
	for _, ns := range namespaces {
		out = append(out, build(ns, byNamespace[ns], r.Namespaces[ns], ts, limits))
	}
	return out
}

// build is the report of namespace ns, whose objects (scanned of them)
// have findings.
func build(ns string, findings []audit.Finding, scanned int, ts metav1.Timestamp, limits Limits) Report {
	rep := Report{Namespace: ns, Results: []v1alpha1.ReportResult{}}
	objects := map[merge.ObjectRef]bool{}
	all := make([]v1alpha1.ReportResult, 0, len(findings))
	for _, f := range findings {
		objects[f.Object] = true
		res := result(f, ts)
		switch res.Result {
		case ResultFail:
			rep.Summary.Fail++
		case ResultSkip:
			rep.Summary.Skip++
		default:
			rep.Summary.Warn++
		}
		all = append(all, res)
	}
	rep.Summary.Pass = max(scanned-len(objects), 0)
	rep.Results, rep.Dropped = limits.apply(all)
	return rep
}

// The results of a finding.
const (
	ResultFail v1alpha1.Result = "fail"
	ResultWarn v1alpha1.Result = "warn"
	ResultSkip v1alpha1.Result = "skip"
)

// ResultOf is the result of a finding whose action is a: fail for deny,
// skip for dryrun (the rule is only observed), warn for the rest (warn,
// and repair and prune, which admission applies to new writes but which
// the stored object still needs).
func ResultOf(a policy.Action) v1alpha1.Result {
	switch a {
	case policy.ActionDeny:
		return ResultFail
	case policy.ActionDryRun:
		return ResultSkip
	}
	return ResultWarn
}

// result is the report result of one finding.
func result(f audit.Finding, ts metav1.Timestamp) v1alpha1.ReportResult {
	props := map[string]string{PropertyAction: string(f.Action)}
	if f.Path != "" {
		props[PropertyPath] = f.Path
	}
	if f.Command != "" {
		props[PropertyFix] = f.Command
	}
	return v1alpha1.ReportResult{
		Source:    Source,
		Policy:    string(f.Rule),
		Rule:      string(f.Rule),
		Severity:  v1alpha1.ResultSeverity(policy.Severity(f.Rule)),
		Timestamp: ts,
		Result:    ResultOf(f.Action),
		Subjects: []corev1.ObjectReference{{
			APIVersion: f.Object.APIVersion, Kind: f.Object.Kind, Namespace: f.Object.Namespace, Name: f.Object.Name, UID: f.UID,
		}},
		Description: f.Message,
		Properties:  props,
	}
}
