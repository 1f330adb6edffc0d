// Package reports publishes the periodic audit's findings as policy
// reports, the custom resources that policy dashboards (Policy Reporter,
// Headlamp, Backstage plugins) and Kyverno's tooling read: OpenReports
// (openreports.io/v1alpha1 Report and ClusterReport, with the types of
// github.com/openreports/reports-api) or the older wgpolicyk8s.io/v1alpha2
// PolicyReport and ClusterPolicyReport.
//
// Build turns an audit.Report into one report per namespace that has
// findings or already holds apply-hygiene's report, plus a cluster report
// for the cluster-scoped objects' findings. Every report is named
// apply-hygiene, labelled app.kubernetes.io/managed-by=apply-hygiene and
// holds one result per finding (policy and rule: the rule ID; result: fail
// for deny, warn for warn, repair and prune, skip for dryrun; severity:
// policy.Severity; properties path, action and fix, the command of
// audit.Finding.Command). The summary counts every finding, and as pass the
// objects of the namespace without any. The results are bounded (Limits)
// so a report stays far below etcd's object size limit; the dropped ones
// are counted in the annotation apply-hygiene.io/dropped-results.
//
// A Publisher (an audit.Publisher) writes the reports with server-side
// apply, so a report is updated in place and a namespace whose drift was
// fixed keeps a report with no results. It checks discovery for the
// format's CRDs before each run: apply-hygiene does not install them, and
// while they are missing it says so once (an error in the log, a Warning
// event ReportsCRDMissing on the server's own Pod) and in the gauge
// apply_hygiene_reports_crd_missing{format}, and publishes again as soon
// as they appear. See Example and ExampleNewPublisher.
package reports
