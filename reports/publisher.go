package reports

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/internal/events"
)

// Options configure a Publisher.
type Options struct {
	// Format is the report format: FormatOpenReports or FormatWGPolicy.
	Format Format
	// Limits bound each report's results. Default: DefaultMaxResults
	// results, DefaultMaxBytes bytes.
	Limits Limits
	// Registry receives the gauge apply_hygiene_reports_crd_missing{format}
	// and the counter apply_hygiene_reports_publish_failures_total{format}.
	// Default: nil, no metrics.
	Registry prometheus.Registerer
	// Recorder records the Warning event ReportsCRDMissing on the
	// server's Pod when the CRDs are found missing. Default: nil, no event.
	Recorder audit.EventRecorder
	// PodNamespace and PodName name the server's own Pod ($POD_NAMESPACE,
	// $POD_NAME). Default: empty, no event.
	PodNamespace, PodName string
}

// Discovery looks up the resources the API server serves; a
// *discovery.DiscoveryClient is one.
type Discovery interface {
	ServerResourcesForGroupVersionWithContext(ctx context.Context, groupVersion string) (*metav1.APIResourceList, error)
}

// Publisher writes the audit's reports; it is an audit.Publisher.
type Publisher struct {
	client    dynamic.Interface
	discovery Discovery
	opts      Options
	kinds     kinds
	metrics   *metrics
	mu        sync.Mutex
	// missing is the CRDs' state at the last check; nil before the first.
	missing *bool
}

var _ audit.Publisher = (*Publisher)(nil)

// EventReasonCRDMissing is the reason of the event recorded on the
// server's Pod when the format's CRDs are missing.
const EventReasonCRDMissing = "ReportsCRDMissing"

// NewPublisher returns a Publisher that writes with client and looks the
// CRDs up with disc, and registers its metrics on opts.Registry.
func NewPublisher(client dynamic.Interface, disc Discovery, opts Options) (*Publisher, error) {
	k, err := opts.Format.resources()
	if err != nil {
		return nil, fmt.Errorf("creating the report publisher: %w", err)
	}
	m, err := newMetrics(opts.Registry, opts.Format)
	if err != nil {
		return nil, err
	}
	opts.Limits = opts.Limits.withDefaults()
	return &Publisher{client: client, discovery: disc, opts: opts, kinds: k, metrics: m}, nil
}

// Publish implements audit.Publisher: it writes the reports of report, or,
// when the CRDs are missing, says so and returns nil. It writes every
// report it can and returns the failures joined.
func (p *Publisher) Publish(ctx context.Context, report *audit.Report, scanned time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	err := p.publish(ctx, report, scanned)
	if err != nil {
		p.metrics.failures.Inc()
	}
	return err
}

func (p *Publisher) publish(ctx context.Context, report *audit.Report, scanned time.Time) error {
	present, err := p.crdsPresent(ctx)
	if err != nil {
		return err
	}
	p.setMissing(ctx, !present)
	if !present {
		return nil
	}
	existing, err := p.existing(ctx)
	if err != nil {
		return err
	}
	var errs []error
	written := 0
	for _, r := range Build(report, scanned, existing, p.opts.Limits) {
		ok, err := p.apply(ctx, r)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			written++
		}
	}
	logr.FromContextOrDiscard(ctx).WithName("reports").V(1).Info("policy reports published", "format", string(p.opts.Format), "reports", written)
	return errors.Join(errs...)
}

// apply writes r with server-side apply. A namespace that is gone or
// being deleted since the scan is skipped.
func (p *Publisher) apply(ctx context.Context, r Report) (bool, error) {
	obj, err := p.opts.Format.Object(r, p.opts.Limits)
	if err != nil {
		return false, err
	}
	var target dynamic.ResourceInterface = p.client.Resource(p.kinds.cluster)
	if r.Namespace != "" {
		target = p.client.Resource(p.kinds.namespaced).Namespace(r.Namespace)
	}
	_, err = target.Apply(ctx, Name, obj, metav1.ApplyOptions{FieldManager: Source, Force: true})
	switch {
	case err == nil:
		return true, nil
	case r.Namespace != "" && (apierrors.IsNotFound(err) || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)):
		return false, nil
	}
	return false, fmt.Errorf("writing %s %s: %w", obj.GetKind(), reportName(r.Namespace), err)
}

// existing returns the namespaces that hold a report of apply-hygiene's,
// with "" for the cluster report.
func (p *Publisher) existing(ctx context.Context) ([]string, error) {
	var out []string
	for _, gvr := range []schema.GroupVersionResource{p.kinds.namespaced, p.kinds.cluster} {
		list, err := p.client.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: ManagedByLabel + "=" + Source})
		if err != nil {
			return nil, fmt.Errorf("listing the %s of apply-hygiene: %w", gvr.Resource, err)
		}
		for _, item := range list.Items {
			if item.GetName() == Name {
				out = append(out, item.GetNamespace())
			}
		}
	}
	return out, nil
}

// crdsPresent reports whether discovery serves both report resources.
func (p *Publisher) crdsPresent(ctx context.Context) (bool, error) {
	gv := p.kinds.namespaced.GroupVersion().String()
	list, err := p.discovery.ServerResourcesForGroupVersionWithContext(ctx, gv)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("looking up %s in discovery: %w", gv, err)
	}
	found := map[string]bool{}
	for _, r := range list.APIResources {
		found[r.Name] = true
	}
	return found[p.kinds.namespaced.Resource] && found[p.kinds.cluster.Resource], nil
}

// setMissing records the CRDs' state: the gauge at every check, the log
// line and the event only when the state changes (and at the first check
// when they are missing).
func (p *Publisher) setMissing(ctx context.Context, missing bool) {
	if missing {
		p.metrics.crdMissing.Set(1)
	} else {
		p.metrics.crdMissing.Set(0)
	}
	if p.missing != nil && *p.missing == missing {
		return
	}
	first := p.missing == nil
	p.missing = &missing
	log := logr.FromContextOrDiscard(ctx).WithName("reports")
	gv := p.kinds.namespaced.GroupVersion().String()
	if !missing {
		if !first {
			log.Info("the policy report CRDs are installed now; publishing the audit's reports", "format", string(p.opts.Format), "groupVersion", gv)
		}
		return
	}
	err := fmt.Errorf("the API server serves no %s and %s in %s", p.kinds.namespaced.Resource, p.kinds.cluster.Resource, gv)
	log.Error(err, "policy report CRDs missing; the audit publishes no reports until they are installed", "format", string(p.opts.Format))
	if p.opts.Recorder != nil && p.opts.PodName != "" && p.opts.PodNamespace != "" {
		pod := events.Regarding("v1", "Pod", p.opts.PodNamespace, p.opts.PodName, "")
		p.opts.Recorder.Eventf(pod, nil, corev1.EventTypeWarning, EventReasonCRDMissing, "PublishReports",
			"The %s and %s CRDs (%s, reports format %s) are not installed: the audit's findings are not published as policy reports until they are.",
			p.kinds.namespacedKind, p.kinds.clusterKind, gv, p.opts.Format)
	}
}

func reportName(namespace string) string {
	if namespace == "" {
		return Name
	}
	return namespace + "/" + Name
}
