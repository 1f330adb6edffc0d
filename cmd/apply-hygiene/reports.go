package main

import (
	"errors"
	"fmt"
	"os"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/reports"
)

// validateReports checks --reports-format and --reports-max-results.
func (o *Options) validateReports() []error {
	var errs []error
	format, err := reports.ParseFormat(o.ReportsFormat)
	if err != nil {
		errs = append(errs, fmt.Errorf("--reports-format: %w", err))
	}
	if format != "" && format != reports.FormatNone && o.AuditInterval == 0 {
		errs = append(errs, errors.New("--reports-format publishes the periodic audit's findings: it needs --audit-interval"))
	}
	if o.ReportsMaxResults < 1 {
		errs = append(errs, fmt.Errorf("--reports-max-results must be positive, got %d", o.ReportsMaxResults))
	}
	return errs
}

// newReportPublisher returns the publisher of --reports-format, nil for
// none. The ReportsCRDMissing event regards this replica's Pod:
// $POD_NAME in --namespace.
func newReportPublisher(cfg *rest.Config, dyn dynamic.Interface, recorder audit.EventRecorder, opts Options) (audit.Publisher, error) {
	format, err := reports.ParseFormat(opts.ReportsFormat)
	if err != nil {
		return nil, fmt.Errorf("--reports-format: %w", err)
	}
	if format == reports.FormatNone {
		return nil, nil
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the discovery client: %w", err)
	}
	p, err := reports.NewPublisher(dyn, disc, reports.Options{
		Format:       format,
		Limits:       reports.Limits{MaxResults: opts.ReportsMaxResults},
		Registry:     ctrlmetrics.Registry,
		Recorder:     recorder,
		PodNamespace: opts.Namespace,
		PodName:      os.Getenv("POD_NAME"),
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}
