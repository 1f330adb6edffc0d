package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// loadOptions bound and pace one HTTPS load.
type loadOptions struct {
	url      string
	client   *http.Client
	reviews  []review
	n        int
	duration time.Duration
	// rate is requests per second; 0 sends as fast as workers can.
	rate    float64
	workers int
}

// job is one request: which review, and when it was due (at a fixed
// rate, latency counts from then, so a slow server cannot hide its queue).
type job struct {
	i   int
	due time.Time
}

// runLoad sends reviews until n are sent or duration passed.
func runLoad(ctx context.Context, o loadOptions) latencies {
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	jobs := make(chan job, o.workers)
	results := make([][]time.Duration, o.workers)
	errs := make([]int, o.workers)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range o.workers {
		wg.Go(func() {
			for j := range jobs {
				if err := send(ctx, o, j); err != nil {
					if ctx.Err() == nil { // not cut off by -duration
						errs[w]++
					}
					continue
				}
				results[w] = append(results[w], time.Since(j.due))
			}
		})
	}
	schedule(ctx, o, jobs)
	close(jobs)
	wg.Wait()
	out := latencies{wall: time.Since(start)}
	for w := range o.workers {
		out.took = append(out.took, results[w]...)
		out.errors += errs[w]
	}
	slices.Sort(out.took)
	return out
}

// schedule hands out n jobs: at the fixed rate, or as soon as a worker
// takes one.
func schedule(ctx context.Context, o loadOptions, jobs chan<- job) {
	start := time.Now()
	for i := range o.n {
		due := time.Now()
		if o.rate > 0 {
			due = start.Add(time.Duration(float64(i) / o.rate * float64(time.Second)))
			select {
			case <-time.After(time.Until(due)):
			case <-ctx.Done():
				return
			}
		}
		select {
		case jobs <- job{i: i, due: due}:
		case <-ctx.Done():
			return
		}
	}
}

func send(ctx context.Context, o loadOptions, j job) error {
	r := o.reviews[j.i%len(o.reviews)]
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.url, bytes.NewReader(r.body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := o.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", r.name, resp.StatusCode)
	}
	return unreviewed(r.name, body)
}

// unreviewed returns an error when the server answered without a review:
// an internal error, or allowed by the Ignore failure policy.
func unreviewed(name string, body []byte) error {
	var answer struct {
		Response struct {
			Status *struct {
				Code int `json:"code"`
			} `json:"status"`
			Warnings []string `json:"warnings"`
		} `json:"response"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return fmt.Errorf("%s: decoding the answer: %w", name, err)
	}
	if st := answer.Response.Status; st != nil && st.Code >= http.StatusInternalServerError {
		return fmt.Errorf("%s: answered %d", name, st.Code)
	}
	for _, w := range answer.Response.Warnings {
		if strings.HasPrefix(w, "apply-hygiene could not review") {
			return fmt.Errorf("%s: %s", name, w)
		}
	}
	return nil
}
