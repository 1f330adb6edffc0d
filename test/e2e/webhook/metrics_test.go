package webhook_test

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The metrics endpoint counts the requests a test makes: one denied
// imperative edit and one warned apply.
func TestMetricsCountTheRequests(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	metrics := framework.Webhook(t).MetricsURL
	denied := `apply_hygiene_reviews_total{classification="imperative",outcome="denied",webhook="validate"}`
	denyDecisions := `apply_hygiene_decisions_total{action="deny",rule="imperative-edit",webhook="validate"}`
	orphanWarnings := `apply_hygiene_decisions_total{action="warn",rule="orphaned-field",webhook="validate"}`
	before := scrape(t, metrics)

	k.Run(t, "apply", "-f", "testdata/deployment-v1.yaml").MustSucceed(t)
	k.Run(t, "set", "image", "deployment/web", "nginx=nginx:1.99").MustFail(t)
	k.Run(t, "rollout", "restart", "deployment/web").MustSucceed(t)
	k.Run(t, "apply", "-f", "testdata/deployment-v2.yaml").MustSucceed(t)

	after := scrape(t, metrics)
	for _, series := range []string{denied, denyDecisions, orphanWarnings} {
		if got := after[series] - before[series]; got != 1 {
			t.Errorf("%s went from %v to %v, want one more", series, before[series], after[series])
		}
	}
	if after[`apply_hygiene_policy_set_version`] != 1 {
		t.Errorf("apply_hygiene_policy_set_version = %v, want 1", after[`apply_hygiene_policy_set_version`])
	}
}

var sample = regexp.MustCompile(`(?m)^(apply_hygiene_[a-z_]+(?:\{[^}]*\})?) ([0-9.e+-]+)$`)

// scrape reads the apply_hygiene_ samples of a Prometheus endpoint.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scraping %s: %v", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, m := range sample.FindAllStringSubmatch(string(body), -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatalf("parsing %q: %v", m[0], err)
		}
		out[m[1]] = v
	}
	return out
}
