package reports

import (
	"fmt"
	"strconv"

	v1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Name is the name of every report apply-hygiene writes.
const Name = "apply-hygiene"

// ManagedByLabel marks apply-hygiene's reports: app.kubernetes.io/managed-by
// with the value Source.
const ManagedByLabel = "app.kubernetes.io/managed-by"

// DroppedResultsAnnotation counts the results a report left out (Limits).
const DroppedResultsAnnotation = "apply-hygiene.io/dropped-results"

// Object returns r as the format's report object, ready for server-side
// apply: a Report or PolicyReport in r's namespace, or the cluster report.
func (f Format) Object(r Report, limits Limits) (*unstructured.Unstructured, error) {
	k, err := f.resources()
	if err != nil {
		return nil, err
	}
	limits = limits.withDefaults()
	meta := metav1.ObjectMeta{
		Name:        Name,
		Namespace:   r.Namespace,
		Labels:      map[string]string{ManagedByLabel: Source},
		Annotations: map[string]string{DroppedResultsAnnotation: strconv.Itoa(r.Dropped)},
	}
	kind := k.namespacedKind
	if r.Namespace == "" {
		kind = k.clusterKind
	}
	apiVersion := k.namespaced.GroupVersion().String()
	var obj any
	switch f {
	case FormatOpenReports:
		obj = openReport(r, meta, apiVersion, kind, limits)
	default:
		obj = wgPolicy(r, meta, apiVersion, kind)
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting the %s of namespace %q: %w", kind, r.Namespace, err)
	}
	return &unstructured.Unstructured{Object: content}, nil
}

// openReport is r as an OpenReports Report, or ClusterReport without a
// namespace; configuration.limits.maxResults is the Limits' MaxResults.
func openReport(r Report, meta metav1.ObjectMeta, apiVersion, kind string, limits Limits) any {
	tm := metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
	cfg := &v1alpha1.ReportConfiguration{Limits: v1alpha1.Limits{MaxResults: limits.MaxResults}}
	if r.Namespace == "" {
		return &v1alpha1.ClusterReport{TypeMeta: tm, ObjectMeta: meta, Source: Source, Configuration: cfg, Summary: r.Summary, Results: r.Results}
	}
	return &v1alpha1.Report{TypeMeta: tm, ObjectMeta: meta, Source: Source, Configuration: cfg, Summary: r.Summary, Results: r.Results}
}
