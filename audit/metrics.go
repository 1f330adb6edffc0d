package audit

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the audit's gauges. Labels carry rule IDs and namespaces
// only, never a value of an object. A replica that has not scanned exports
// none of them (objects and lastRun are vectors without labels, empty until
// the first export), so that a sum over the replicas counts each scan once:
// only the leader scans.
type metrics struct {
	findings *prometheus.GaugeVec
	objects  *prometheus.GaugeVec
	lastRun  *prometheus.GaugeVec
	// shown are the label pairs set by the last export.
	shown map[[2]string]bool
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		findings: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apply_hygiene_audit_findings",
			Help: "Findings of the last periodic audit, by rule and namespace.",
		}, []string{"rule", "namespace"}),
		objects: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apply_hygiene_audit_objects",
			Help: "Objects listed by the last periodic audit of this replica; absent until it scanned.",
		}, nil),
		lastRun: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apply_hygiene_audit_last_success_timestamp_seconds",
			Help: "When the last periodic audit of this replica finished without error, in seconds since the epoch; absent until it scanned.",
		}, nil),
		shown: map[[2]string]bool{},
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.findings, m.objects, m.lastRun} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering audit metrics: %w", err)
		}
	}
	return m, nil
}

// export sets the gauges to the report's counts, and removes the label
// pairs that have no finding any more.
func (m *metrics) export(r *Report, finished float64) {
	counts := map[[2]string]float64{}
	for _, f := range r.Findings {
		counts[[2]string{string(f.Rule), f.Object.Namespace}]++
	}
	for key := range m.shown {
		if _, ok := counts[key]; !ok {
			m.findings.DeleteLabelValues(key[0], key[1])
			delete(m.shown, key)
		}
	}
	for key, n := range counts {
		m.findings.WithLabelValues(key[0], key[1]).Set(n)
		m.shown[key] = true
	}
	m.objects.WithLabelValues().Set(float64(r.Objects))
	m.lastRun.WithLabelValues().Set(finished)
}
