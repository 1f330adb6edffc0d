package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"
)

// sideOptions pace the side-by-side measure of -peer.
type sideOptions struct {
	workers int
	// round is how long each server is loaded in a round; rounds how many
	// rounds, the servers taking turns in each.
	round  time.Duration
	rounds int
	// fixedRate and fixedDuration are the fixed-rate phase of the peer
	// and apply-hygiene; a zero fixedRate skips it.
	fixedRate     float64
	fixedDuration time.Duration
	// warmup is the number of reviews sent to each server before its
	// first round.
	warmup int
	// variants is how many distinct bodies of each review are sent in
	// turn (see variants); 1 sends the review as it is.
	variants int
	// strict fails the run when apply-hygiene answered any review with an
	// error (-shadow-verify).
	strict bool
}

// sideResult is what one review measured on each server.
type sideResult struct {
	rounds map[string][]latencies
	fixed  map[string]latencies
}

// sideBySide loads each server with each review, in rounds, and prints
// the tables and ratios to out. It returns how many reviews each server
// was sent, by name.
func sideBySide(ctx context.Context, out io.Writer, refs *references, reviews []review, o sideOptions) (map[string]int, error) {
	// A client each: every server keeps its connections across rounds.
	clients := map[string]*http.Client{}
	for _, s := range refs.servers {
		c, err := newClient(refs.caPEM, o.workers)
		if err != nil {
			return nil, err
		}
		clients[s.name] = c
		// A server shuts down at once only when no connection is open.
		defer c.CloseIdleConnections()
	}
	sent := map[string]int{}
	for _, r := range reviews {
		vs, err := variants(r, o.variants)
		if err != nil {
			return nil, err
		}
		res, err := measureReview(ctx, clients, refs.servers, vs, o)
		if err != nil {
			return nil, err
		}
		printReview(out, refs.servers, r, res, o)
		for _, s := range refs.servers {
			sent[s.name] += o.warmup + res.fixed[s.name].sent()
			for _, l := range res.rounds[s.name] {
				sent[s.name] += l.sent()
			}
		}
		if n := errorsOf(res.rounds[hygieneName]) + res.fixed[hygieneName].errors; o.strict && n > 0 {
			return nil, fmt.Errorf("%s: apply-hygiene could not answer %d reviews (with -shadow-verify, a pruned analysis that differs from the whole one is one)", r.name, n)
		}
	}
	return sent, nil
}

// measureReview runs the rounds (servers interleaved, so that the
// machine's noise falls on all of them alike), then the fixed-rate phase.
func measureReview(ctx context.Context, clients map[string]*http.Client, servers []reference, vs []review, o sideOptions) (sideResult, error) {
	r := vs[0]
	res := sideResult{rounds: map[string][]latencies{}, fixed: map[string]latencies{}}
	load := func(s reference, n int, d time.Duration, rate float64) latencies {
		return runLoad(ctx, loadOptions{url: s.url, client: clients[s.name], reviews: vs, n: n, duration: d, rate: rate, workers: o.workers})
	}
	for _, s := range servers {
		if l := load(s, o.warmup, time.Minute, 0); l.errors > 0 {
			return res, fmt.Errorf("%s: %s answered %d of %d reviews with an error", r.name, s.name, l.errors, o.warmup)
		}
	}
	for range o.rounds {
		for _, s := range servers {
			res.rounds[s.name] = append(res.rounds[s.name], load(s, math.MaxInt32, o.round, 0))
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
	}
	if o.fixedRate == 0 {
		return res, nil
	}
	n := o.fixedN()
	for _, s := range servers {
		if s.name == peerName || s.name == hygieneName {
			// Latency counts from when each review was due; the grace
			// lets a server that falls behind show its queue.
			res.fixed[s.name] = load(s, n, o.fixedDuration+5*time.Second, o.fixedRate)
		}
	}
	return res, ctx.Err()
}

func printReview(out io.Writer, servers []reference, r review, res sideResult, o sideOptions) {
	bodies := fmt.Sprintf("%d variants", o.variants)
	if o.variants <= 1 {
		bodies = "as captured"
	}
	fmt.Fprintf(out, "\n### %s: %d clients, %d rounds of %v, %s\n\n", r.name, o.workers, o.rounds, o.round, bodies)
	fmt.Fprintln(out, "| server | reviews/s | p50 | p99 | errors |")
	fmt.Fprintln(out, "|---|---|---|---|---|")
	for _, s := range servers {
		ls := res.rounds[s.name]
		fmt.Fprintf(out, "| %s | %s | %s | %s | %d |\n", s.name, spread(ls, throughput, count), spread(ls, quantileOf(0.5), millis),
			spread(ls, quantileOf(0.99), millis), errorsOf(ls))
	}
	if len(res.fixed) > 0 {
		fmt.Fprintf(out, "\nAt a fixed %.0f reviews/s for %v:\n\n", o.fixedRate, o.fixedDuration)
		fmt.Fprintln(out, "| server | answered | in | p50 | p99 | errors |")
		fmt.Fprintln(out, "|---|---|---|---|---|---|")
		for _, name := range []string{peerName, hygieneName} {
			l := res.fixed[name]
			fmt.Fprintf(out, "| %s | %s of %s | %.1f s | %s | %s | %d |\n", name, count(float64(len(l.took))), count(float64(o.fixedN())),
				l.wall.Seconds(), millis(float64(l.quantile(0.5))), millis(float64(l.quantile(0.99))), l.errors)
		}
	}
	hygiene, peer, fl := median(res.rounds[hygieneName]), median(res.rounds[peerName]), median(res.rounds[floorName])
	fmt.Fprintf(out, "\napply-hygiene throughput ÷ peer: %.2f× (goal ≥ 1.25×); ÷ floor: %.2f× (goal ≥ 0.5×); medians of the rounds\n",
		hygiene/peer, hygiene/fl)
	if len(res.fixed) == 0 {
		return
	}
	h, p := res.fixed[hygieneName], res.fixed[peerName]
	fmt.Fprintf(out, "apply-hygiene p99 at %.0f/s ÷ peer's: %.2f× (goal ≤ 1×)", o.fixedRate, float64(h.quantile(0.99))/float64(p.quantile(0.99)))
	if o.behind(h) || o.behind(p) {
		fmt.Fprintf(out, "; not comparable: a server fell behind the rate")
	}
	fmt.Fprintln(out)
}

// behind reports whether a server fell behind the fixed rate: it did not
// answer every review (the rest are not in its quantiles), or took over a
// tenth longer than the phase to answer them.
func (o sideOptions) behind(l latencies) bool {
	return len(l.took) < o.fixedN() || l.wall > o.fixedDuration+o.fixedDuration/10
}

// fixedN is the number of reviews of the fixed-rate phase.
func (o sideOptions) fixedN() int { return int(o.fixedRate * o.fixedDuration.Seconds()) }

func throughput(l latencies) float64 { return float64(len(l.took)) / l.wall.Seconds() }

func quantileOf(q float64) func(latencies) float64 {
	return func(l latencies) float64 { return float64(l.quantile(q)) }
}

// median is the median throughput of rounds.
func median(rounds []latencies) float64 {
	v := make([]float64, 0, len(rounds))
	for _, l := range rounds {
		v = append(v, throughput(l))
	}
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func errorsOf(rounds []latencies) int {
	n := 0
	for _, l := range rounds {
		n += l.errors
	}
	return n
}

// spread formats the min–max of f over rounds, or one value when they
// format alike.
func spread(rounds []latencies, f func(latencies) float64, format func(float64) string) string {
	if len(rounds) == 0 {
		return "—"
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range rounds {
		lo, hi = min(lo, f(l)), max(hi, f(l))
	}
	a, b := format(lo), format(hi)
	if a == b {
		return a
	}
	if ia, ib := strings.LastIndexByte(a, ' '), strings.LastIndexByte(b, ' '); ia > 0 && a[ia:] == b[ib:] {
		a = a[:ia] // one unit: "4.2–4.8 ms"
	}
	return a + "–" + b
}

// millis formats nanoseconds as milliseconds with two significant digits
// (three from 100 ms), or seconds from 1 s.
func millis(ns float64) string {
	ms := ns / float64(time.Millisecond)
	switch {
	case ms < 1:
		return fmt.Sprintf("%.2f ms", ms)
	case ms < 10:
		return fmt.Sprintf("%.1f ms", ms)
	case ms < 1000:
		return fmt.Sprintf("%.0f ms", ms)
	default:
		return fmt.Sprintf("%.1f s", ms/1000)
	}
}

// count formats a rate with thousands separators.
func count(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
