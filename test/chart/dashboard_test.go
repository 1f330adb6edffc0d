package chart_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// dashboard is the part of a Grafana dashboard the test reads.
type dashboard struct {
	UID        string `json:"uid"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query string `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		Type       string     `json:"type"`
		Title      string     `json:"title"`
		Datasource datasource `json:"datasource"`
		Targets    []struct {
			Datasource datasource `json:"datasource"`
			Expr       string     `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// TestGrafanaDashboard renders the dashboard ConfigMap where the Grafana
// sidecar looks for it: in the namespace and with the labels of the values,
// holding files/grafana-dashboard.json unchanged, whose every panel and
// query reads the data source the user picks in its datasource variable.
func TestGrafanaDashboard(t *testing.T) {
	objs := decode(t, render(t, "default", "--set", "metrics.dashboard.enabled=true,metrics.dashboard.namespace=monitoring",
		"--show-only", "templates/grafana-dashboard.yaml"))
	cm := only[corev1.ConfigMap](t, objs, "ConfigMap")
	if cm.Name != releaseName+"-apply-hygiene-dashboard" || cm.Namespace != "monitoring" || cm.Labels["grafana_dashboard"] != "1" {
		t.Errorf("ConfigMap %s/%s with grafana_dashboard=%q, want monitoring/%s-apply-hygiene-dashboard with grafana_dashboard=1",
			cm.Namespace, cm.Name, cm.Labels["grafana_dashboard"], releaseName)
	}
	file, err := os.ReadFile(filepath.Join(chartDir(t), "files", "grafana-dashboard.json"))
	if err != nil {
		t.Fatalf("reading the dashboard: %v", err)
	}
	if diff := cmp.Diff(string(file), cm.Data["apply-hygiene.json"]+"\n"); diff != "" {
		t.Errorf("the ConfigMap's dashboard differs from files/grafana-dashboard.json (-want +got):\n%s", diff)
	}

	var d dashboard
	if err := json.Unmarshal(file, &d); err != nil {
		t.Fatalf("decoding the dashboard: %v", err)
	}
	if len(d.Templating.List) != 1 || d.Templating.List[0].Name != "datasource" ||
		d.Templating.List[0].Type != "datasource" || d.Templating.List[0].Query != "prometheus" {
		t.Errorf("template variables %+v, want only datasource of type datasource over prometheus", d.Templating.List)
	}
	want := datasource{Type: "prometheus", UID: "${datasource}"}
	queries := 0
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if p.Datasource != want || len(p.Targets) == 0 {
			t.Errorf("panel %q: data source %+v and %d queries, want %+v and at least one", p.Title, p.Datasource, len(p.Targets), want)
		}
		for _, q := range p.Targets {
			queries++
			if q.Datasource != want || q.Expr == "" {
				t.Errorf("panel %q: query %q on %+v, want an expression on %+v", p.Title, q.Expr, q.Datasource, want)
			}
		}
	}
	if queries == 0 {
		t.Error("the dashboard has no query")
	}
}

// TestMonitoringOffByDefault: neither the PrometheusRule nor the dashboard
// is rendered unless asked for, also after helm upgrade --reuse-values
// from a chart without their values (metrics.prometheusRule and
// metrics.dashboard absent).
func TestMonitoringOffByDefault(t *testing.T) {
	for name, extra := range map[string][]string{
		"the default values":             nil,
		"values of a chart without them": {"--set", "metrics.prometheusRule=null,metrics.dashboard=null"},
		"the ServiceMonitor on":          {"--set", "metrics.serviceMonitor.enabled=true"},
	} {
		t.Run(name, func(t *testing.T) {
			for _, o := range decode(t, render(t, "default", extra...)) {
				if o.GetKind() == "PrometheusRule" || o.GetName() == releaseName+"-apply-hygiene-dashboard" {
					t.Errorf("rendered %s %s", o.GetKind(), o.GetName())
				}
			}
		})
	}
}
