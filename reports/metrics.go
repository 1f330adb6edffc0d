package reports

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the publisher's: whether the format's CRDs are missing, and
// how many publishes failed.
type metrics struct {
	crdMissing prometheus.Gauge
	failures   prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, format Format) (*metrics, error) {
	labels := prometheus.Labels{"format": string(format)}
	m := &metrics{
		crdMissing: prometheus.NewGauge(prometheus.GaugeOpts{
			Name:        "apply_hygiene_reports_crd_missing",
			Help:        "1 when the policy report CRDs of the chosen format were missing at the last publish, else 0.",
			ConstLabels: labels,
		}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name:        "apply_hygiene_reports_publish_failures_total",
			Help:        "Publishes of the audit's policy reports that failed (some report could not be written).",
			ConstLabels: labels,
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.crdMissing, m.failures} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering report metrics: %w", err)
		}
	}
	return m, nil
}
