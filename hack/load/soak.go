package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// soak profiles apply-hygiene's server under load (with -profile), then
// sends each server of -installed what it lacks of -rss-after reviews and
// prints its resident memory then, from /proc/<pid>/status.
func soak(ctx context.Context, o Options, in *installed, reviews []review, sent map[string]int) error {
	var all []review
	for _, r := range reviews {
		vs, err := variants(r, o.Variants)
		if err != nil {
			return err
		}
		all = append(all, vs...)
	}
	load := func(p process, n int, d time.Duration) (latencies, error) {
		client, err := newClient(in.caPEM, o.Workers)
		if err != nil {
			return latencies{}, err
		}
		defer client.CloseIdleConnections()
		l := runLoad(ctx, loadOptions{url: p.url, client: client, reviews: all, n: n, duration: d, workers: o.Workers})
		sent[p.name] += l.sent()
		return l, nil
	}
	fmt.Printf("\n### Resident memory after %s reviews each (%d clients, the reviews' variants in turn)\n\n", count(float64(o.RSSAfter)), o.Workers)
	fmt.Println("| server | reviews sent | VmRSS | of which anonymous / file pages | VmHWM (peak) | top-up: reviews/s, errors |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, p := range in.processes {
		topUp := "—"
		if n := o.RSSAfter - sent[p.name]; n > 0 {
			l, err := load(p, n, 30*time.Minute)
			if err != nil {
				return err
			}
			topUp = fmt.Sprintf("%s/s, %d", count(throughput(l)), l.errors)
		}
		m, err := residentOf(p.pid)
		if err != nil {
			return err
		}
		fmt.Printf("| %s | %s | %s | %s / %s | %s | %s |\n", p.name, count(float64(sent[p.name])), m["VmRSS"], m["RssAnon"], m["RssFile"], m["VmHWM"], topUp)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	// Profiling touches the binary's symbol tables, which then count in
	// its resident memory: only after the memory was read.
	if o.ProfileDir != "" {
		return profile(ctx, o, in, load)
	}
	return nil
}

// profile takes a CPU profile of apply-hygiene's server while it is
// loaded for -profile-seconds, then its allocation profile (since start),
// into -profile.
func profile(ctx context.Context, o Options, in *installed, load func(process, int, time.Duration) (latencies, error)) error {
	if err := os.MkdirAll(o.ProfileDir, 0o755); err != nil {
		return err
	}
	hygiene := in.processes[len(in.processes)-1]
	seconds := int(o.ProfileDuration.Seconds())
	errc := make(chan error, 1)
	go func() {
		errc <- fetch(ctx, in.pprofURL+"profile?seconds="+strconv.Itoa(seconds), filepath.Join(o.ProfileDir, "cpu.pprof"))
	}()
	l, err := load(hygiene, 1<<30, o.ProfileDuration+2*time.Second)
	if err != nil {
		return err
	}
	if err := <-errc; err != nil {
		return err
	}
	fmt.Printf("\nprofiled apply-hygiene for %ds under load (%s/s): %s\n", seconds, count(throughput(l)), filepath.Join(o.ProfileDir, "cpu.pprof"))
	return fetch(ctx, in.pprofURL+"allocs", filepath.Join(o.ProfileDir, "allocs.pprof"))
}

// fetch saves the body of a GET of url in path.
func fetch(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("fetching %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetching %s: HTTP %d", url, resp.StatusCode)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// residentOf reads VmRSS, VmHWM, RssAnon and RssFile of pid from
// /proc/<pid>/status, formatted in MiB.
func residentOf(pid int) (map[string]string, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, fmt.Errorf("reading the memory of pid %d: %w", pid, err)
	}
	defer f.Close()
	out := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		key, v, _ := strings.Cut(s.Text(), ":")
		switch key {
		case "VmRSS", "VmHWM", "RssAnon", "RssFile":
		default:
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		if err != nil {
			return nil, fmt.Errorf("reading %s of pid %d: %w", key, pid, err)
		}
		out[key] = fmt.Sprintf("%.1f MiB", kb/1024)
	}
	if out["VmRSS"] == "" {
		return nil, fmt.Errorf("pid %d: no VmRSS in /proc/%d/status", pid, pid)
	}
	return out, s.Err()
}
