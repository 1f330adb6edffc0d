package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

// review is one AdmissionReview to send.
type review struct {
	name      string
	path      string
	namespace string
	body      []byte
}

// readReviews reads the AdmissionReviews that pattern matches.
func readReviews(pattern string) ([]review, error) {
	paths, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("matching %s: %w", pattern, err)
	}
	var out []review
	for _, p := range paths {
		if filepath.Ext(filepath.Base(p[:len(p)-len(".json")])) == ".cluster" {
			continue
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		var r struct {
			Request struct {
				Namespace string `json:"namespace"`
			} `json:"request"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", p, err)
		}
		out = append(out, review{name: filepath.Base(p), path: p, namespace: r.Request.Namespace, body: body})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no AdmissionReview matches %s", pattern)
	}
	return out, nil
}

// loopbackURL checks that raw is an https URL of a loopback address.
func loopbackURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("parsing -url: %w", err)
	}
	if u.Scheme != "https" {
		return nil, fmt.Errorf("-url %s: only https is supported", raw)
	}
	host := u.Hostname()
	if host == "localhost" {
		return u, nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("-url %s: only loopback addresses (127.0.0.0/8, ::1, localhost) are allowed", raw)
	}
	return u, nil
}

// newClient returns an HTTPS client that trusts caPEM, keeps connections
// alive for workers concurrent requests and dials loopback only.
func newClient(caPEM []byte, workers int) (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("reading -ca: no PEM certificate")
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	transport := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		MaxIdleConns:        workers,
		MaxIdleConnsPerHost: workers,
		IdleConnTimeout:     time.Minute,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
				return nil, fmt.Errorf("dialing %s: not a loopback address", addr)
			}
			return dialer.DialContext(ctx, network, addr)
		},
	}
	return &http.Client{Transport: transport, Timeout: 10 * time.Second}, nil
}

// latencies summarizes request durations.
type latencies struct {
	took   []time.Duration
	errors int
	wall   time.Duration
}

// quantile is the q-quantile of the sorted l.took.
func (l latencies) quantile(q float64) time.Duration {
	if len(l.took) == 0 {
		return 0
	}
	i := int(q * float64(len(l.took)))
	return l.took[min(i, len(l.took)-1)]
}

// sent is the number of reviews answered or failed.
func (l latencies) sent() int { return len(l.took) + l.errors }

func (l latencies) mean() time.Duration {
	if len(l.took) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range l.took {
		sum += d
	}
	return sum / time.Duration(len(l.took))
}

// String summarizes l; l.took is sorted.
func (l latencies) String() string {
	rate := float64(len(l.took)) / l.wall.Seconds()
	return fmt.Sprintf("n=%d errors=%d p50=%v p99=%v p99.9=%v mean=%v throughput=%.0f/s",
		len(l.took), l.errors, l.quantile(0.5), l.quantile(0.99), l.quantile(0.999), l.mean().Round(time.Microsecond), rate)
}

// variantAnnotation makes each variant's last-applied, object and old
// object differ from the other variants' in bytes but not in meaning.
const variantAnnotation = "load.apply-hygiene.io/variant"

// variants returns n copies of r, each with its own request.uid and the
// annotation variantAnnotation set to its number in the object, the old
// object and their last-applied: a server that caches by the bytes of
// last-applied or of the body cannot answer from its cache. n = 1 is r.
func variants(r review, n int) ([]review, error) {
	if n <= 1 {
		return []review{r}, nil
	}
	out := make([]review, 0, n)
	for i := range n {
		var doc map[string]any
		if err := decodeNumbers(r.body, &doc); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", r.name, err)
		}
		request, _ := doc["request"].(map[string]any)
		if request == nil {
			return nil, fmt.Errorf("%s has no request", r.name)
		}
		request["uid"] = fmt.Sprintf("%s-%d", request["uid"], i)
		for _, key := range []string{"object", "oldObject"} {
			if obj, ok := request[key].(map[string]any); ok {
				if err := annotate(obj, strconv.Itoa(i)); err != nil {
					return nil, fmt.Errorf("%s: %s: %w", r.name, key, err)
				}
			}
		}
		body, err := json.Marshal(doc)
		if err != nil {
			return nil, fmt.Errorf("encoding a variant of %s: %w", r.name, err)
		}
		out = append(out, review{name: r.name, path: r.path, namespace: r.namespace, body: body})
	}
	return out, nil
}

// annotate sets variantAnnotation in obj and in its last-applied, if any.
func annotate(obj map[string]any, value string) error {
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		return nil
	}
	annotations, _ := meta["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
		meta["annotations"] = annotations
	}
	annotations[variantAnnotation] = value
	raw, ok := annotations[merge.LastAppliedAnnotation].(string)
	if !ok {
		return nil
	}
	var applied map[string]any
	if err := decodeNumbers([]byte(raw), &applied); err != nil {
		return fmt.Errorf("decoding last-applied: %w", err)
	}
	if err := annotate(applied, value); err != nil {
		return err
	}
	out, err := json.Marshal(applied)
	if err != nil {
		return fmt.Errorf("encoding last-applied: %w", err)
	}
	annotations[merge.LastAppliedAnnotation] = string(out)
	return nil
}

// decodeNumbers decodes JSON keeping numbers as written.
func decodeNumbers(raw []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return d.Decode(v)
}
