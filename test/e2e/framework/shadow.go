package framework

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// shadowSeries is the prefix of the server's error counters for reviews
// whose pruned analysis differed from the whole one (--shadow-verify,
// which every e2e package's server runs with).
const shadowSeries = `apply_hygiene_review_errors_total{reason="shadow_mismatch",`

// checkShadow fails the package when the server counted a shadow
// mismatch, and prints the server's log lines that name it.
func checkShadow(ctx context.Context, w *devenv.Webhook) error {
	if w == nil {
		return nil
	}
	var n float64
	var lines []string
	for _, r := range w.Replicas() {
		if !r.Running() {
			continue
		}
		m, err := shadowMismatches(ctx, r.MetricsURL)
		if err != nil {
			return fmt.Errorf("reading the shadow verification count of replica %d: %w", r.Index, err)
		}
		if m == 0 {
			continue
		}
		n += m
		log, _ := os.ReadFile(r.LogPath)
		for line := range strings.SplitSeq(string(log), "\n") {
			if strings.Contains(line, "shadow verification") {
				lines = append(lines, line)
			}
		}
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("shadow verification: %v reviews' pruned analysis differed from the whole one:\n%s", n, strings.Join(lines, "\n"))
}

// shadowMismatches sums the shadow_mismatch error counters of both
// webhooks on the server's /metrics.
func shadowMismatches(ctx context.Context, metricsURL string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", metricsURL, resp.Status)
	}
	var sum float64
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, shadowSeries) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			return 0, fmt.Errorf("metric line %q: %w", line, err)
		}
		sum += v
	}
	return sum, sc.Err()
}
