package reports

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The wgpolicyk8s.io/v1alpha2 types, written by hand: their Go module
// (sigs.k8s.io/wg-policy-prototypes) is not published on the Go module
// proxy, and the copies vendored by policy engines (Kyverno's
// api/policyreport/v1alpha2) would pull in a whole engine. The JSON is
// that of the PolicyReport and ClusterPolicyReport CRDs; the results and
// the summary have the same fields as OpenReports', which Build fills.

// wgPolicyReport is a PolicyReport or, without a namespace, a
// ClusterPolicyReport: both have the same fields.
type wgPolicyReport struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Summary counts the results by outcome.
	Summary wgPolicyReportSummary `json:"summary"`
	// Results are the findings.
	Results []wgPolicyReportResult `json:"results,omitempty"`
}

// wgPolicyReportSummary counts the results by outcome.
type wgPolicyReportSummary struct {
	Pass  int `json:"pass"`
	Fail  int `json:"fail"`
	Warn  int `json:"warn"`
	Error int `json:"error"`
	Skip  int `json:"skip"`
}

// wgPolicyReportResult is one policy result on the objects in Resources.
type wgPolicyReportResult struct {
	Source     string                   `json:"source"`
	Policy     string                   `json:"policy"`
	Rule       string                   `json:"rule,omitempty"`
	Resources  []corev1.ObjectReference `json:"resources,omitempty"`
	Message    string                   `json:"message,omitempty"`
	Result     string                   `json:"result,omitempty"`
	Properties map[string]string        `json:"properties,omitempty"`
	Timestamp  metav1.Timestamp         `json:"timestamp"`
	Severity   string                   `json:"severity,omitempty"`
}

// wgPolicy converts r into the wgpolicyk8s.io form.
func wgPolicy(r Report, meta metav1.ObjectMeta, apiVersion, kind string) *wgPolicyReport {
	out := &wgPolicyReport{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiVersion, Kind: kind},
		ObjectMeta: meta,
		Summary: wgPolicyReportSummary{
			Pass: r.Summary.Pass, Fail: r.Summary.Fail, Warn: r.Summary.Warn, Error: r.Summary.Error, Skip: r.Summary.Skip,
		},
	}
	for _, res := range r.Results {
		out.Results = append(out.Results, wgPolicyReportResult{
			Source: res.Source, Policy: res.Policy, Rule: res.Rule, Resources: res.Subjects, Message: res.Description,
			Result: string(res.Result), Properties: res.Properties, Timestamp: res.Timestamp, Severity: string(res.Severity),
		})
	}
	return out
}
