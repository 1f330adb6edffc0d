package callcount_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
)

// Webhook names of the chart.
const (
	mutateName   = "mutate.apply-hygiene.io"
	validateName = "validate.apply-hygiene.io"
)

// sample is one exposition line: series (name and labels) and value.
var sample = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) ([0-9.eE+-]+)$`)

// label reads one label of a series.
func label(series, name string) string {
	m := regexp.MustCompile(`[{,]` + name + `="([^"]*)"`).FindStringSubmatch(series)
	if m == nil {
		return ""
	}
	return m[1]
}

// parse keeps the samples of the metrics whose names are given.
func parse(t *testing.T, body io.Reader, names ...string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		keep := false
		for _, n := range names {
			keep = keep || strings.HasPrefix(line, n+"{") || strings.HasPrefix(line, n+" ")
		}
		if !keep {
			continue
		}
		m := sample.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatalf("parsing %q: %v", line, err)
		}
		out[m[1]] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading metrics: %v", err)
	}
	return out
}

// counts is one reading of every counter the test compares.
type counts struct {
	// server is apply_hygiene_reviews_total of the apply-hygiene server.
	server map[string]float64
	// apiserver holds the API server's request and admission counters.
	apiserver map[string]float64
}

// read scrapes the apply-hygiene server and the API server.
func read(t *testing.T, client kubernetes.Interface, serverURL string) counts {
	t.Helper()
	resp, err := http.Get(serverURL)
	if err != nil {
		t.Fatalf("scraping %s: %v", serverURL, err)
	}
	defer func() { _ = resp.Body.Close() }()
	c := counts{server: parse(t, resp.Body, "apply_hygiene_reviews_total")}
	raw, err := client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatalf("scraping the API server: %v", err)
	}
	c.apiserver = parse(t, bytes.NewReader(raw), "apiserver_request_total",
		"apiserver_admission_webhook_request_total", "apiserver_admission_match_condition_exclusions_total")
	return c
}

// reviews is the number of reviews of one webhook (mutate, validate).
func (c counts) reviews(webhook string) float64 {
	return sum(c.server, "apply_hygiene_reviews_total", func(s string) bool { return label(s, "webhook") == webhook })
}

// acted is the number of reviews that warned, denied, patched or failed:
// everything but a plain allow (or skip).
func (c counts) acted() float64 {
	return sum(c.server, "apply_hygiene_reviews_total", func(s string) bool {
		o := label(s, "outcome")
		return o != "allowed" && o != "skipped"
	})
}

// calls is the number of calls the API server made to a webhook.
func (c counts) calls(name string) float64 {
	return sum(c.apiserver, "apiserver_admission_webhook_request_total", func(s string) bool { return label(s, "name") == name })
}

// excluded is the number of calls a webhook's matchConditions spared.
func (c counts) excluded(name string) float64 {
	return sum(c.apiserver, "apiserver_admission_match_condition_exclusions_total", func(s string) bool { return label(s, "name") == name })
}

// writes is the number of write requests (PUT, PATCH, APPLY) to one
// resource ("group/resource" or "group/resource/subresource").
func (c counts) writes(resource string) float64 {
	return sum(c.apiserver, "apiserver_request_total", func(s string) bool {
		switch label(s, "verb") {
		case "PUT", "PATCH", "APPLY":
		default:
			return false
		}
		r := label(s, "group") + "/" + label(s, "resource")
		if sub := label(s, "subresource"); sub != "" {
			r += "/" + sub
		}
		return r == resource
	})
}

func sum(samples map[string]float64, name string, match func(string) bool) float64 {
	var n float64
	for series, v := range samples {
		if strings.HasPrefix(series, name+"{") && match(series) {
			n += v
		}
	}
	return n
}

// delta is after minus before of one reading.
func delta(before, after counts, read func(counts) float64) int {
	return int(read(after) - read(before))
}
