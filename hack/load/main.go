package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Options configure a run; the defaults are the flags'.
type Options struct {
	// URL is the webhook endpoint (loopback only); with Cluster, only its
	// path is used. Default https://127.0.0.1:9443/validate.
	URL string
	// CA is the PEM file of the CA that signed the server's certificate;
	// with Cluster, the control plane's CA.
	CA string
	// Reviews is a glob of AdmissionReview files. Default
	// webhook/testdata/bench/typical-{apply,edit}.json.
	Reviews string
	// N bounds the number of reviews sent; Duration the time. Default
	// 20000 and 2 minutes.
	N        int
	Duration time.Duration
	// Rate is reviews per second; 0 (the default) sends as fast as Workers
	// (default 4; 8 with Peer) can.
	Rate    float64
	Workers int
	// Cluster starts a local control plane and server, and also measures
	// Updates client-go updates and Applies kubectl applies through the
	// API server (defaults 300 and 30; 0 skips).
	Cluster          bool
	Updates, Applies int
	// Peer starts four servers side by side (docs/performance.md) and
	// loads each with each review for Round (default 10s), Rounds times
	// (default 3), the servers taking turns; then the peer and
	// apply-hygiene at FixedRate (default 400/s; 0 skips) for
	// FixedDuration (default 10s). URL, CA, N, Duration and Rate are not
	// used.
	Peer          bool
	Round         time.Duration
	Rounds        int
	FixedRate     float64
	FixedDuration time.Duration
	// Variants is how many distinct bodies of each review -peer sends in
	// turn, each with its own uid and a variant annotation in the objects
	// and their last-applied, so that no cache of last-applied or of the
	// body answers from memory. Default 256; 1 sends the file as it is.
	Variants int
	// ShadowVerify makes apply-hygiene analyze every review pruned and
	// whole (merge.WithShadowVerify; --shadow-verify of the server with
	// -cluster): a difference fails the review, and the run fails on any
	// review apply-hygiene could not answer.
	ShadowVerify bool
	// Installed runs the side by side of Peer with the built binaries,
	// each its own process: the no-op floor (this program with
	// ServeFloor), OPA's server (opa run --server, at go.mod's version)
	// with the peer's Rego, and apply-hygiene's server as the chart runs
	// it, against a local control plane. Then each gets what it lacks of
	// RSSAfter reviews (default 100,000) and its VmRSS is read.
	Installed bool
	RSSAfter  int
	// ServerBinary, with Installed, is a prebuilt apply-hygiene server to
	// run instead of building the tree's (to compare two commits).
	ServerBinary string
	// ProfileDir, with Installed, receives cpu.pprof (apply-hygiene's
	// server loaded for ProfileDuration, default 20s) and allocs.pprof.
	ProfileDir      string
	ProfileDuration time.Duration
	// ServeFloor serves the no-op floor on this loopback address with
	// TLSCert and TLSKey until interrupted (how Installed starts it).
	ServeFloor, TLSCert, TLSKey string
}

func main() {
	var o Options
	flag.StringVar(&o.URL, "url", "https://127.0.0.1:9443/validate", "webhook endpoint (loopback only); with -cluster only the path is used")
	flag.StringVar(&o.CA, "ca", "", "PEM file of the CA of the server's certificate (not with -cluster)")
	flag.StringVar(&o.Reviews, "reviews", "webhook/testdata/bench/typical-[ae][pd]*.json", "glob of AdmissionReviews to send")
	flag.IntVar(&o.N, "n", 20000, "number of reviews to send")
	flag.DurationVar(&o.Duration, "duration", 2*time.Minute, "time bound of the review load")
	flag.Float64Var(&o.Rate, "rate", 0, "reviews per second; 0 sends as fast as -workers can")
	flag.IntVar(&o.Workers, "workers", 0, "concurrent requests (default 4; 8 with -peer)")
	flag.BoolVar(&o.Cluster, "cluster", false, "start a local control plane and server, and measure updates through the API server")
	flag.IntVar(&o.Updates, "updates", 300, "with -cluster: client-go updates per namespace")
	flag.IntVar(&o.Applies, "applies", 30, "with -cluster: kubectl applies per namespace")
	flag.BoolVar(&o.Peer, "peer", false, "start the no-op servers, the OPA peer and apply-hygiene side by side and compare them")
	flag.DurationVar(&o.Round, "round", 10*time.Second, "with -peer: how long each server is loaded in a round")
	flag.IntVar(&o.Rounds, "rounds", 3, "with -peer: rounds, the servers taking turns in each")
	flag.Float64Var(&o.FixedRate, "fixed-rate", 400, "with -peer: reviews per second of the fixed-rate phase; 0 skips it")
	flag.DurationVar(&o.FixedDuration, "fixed-duration", 10*time.Second, "with -peer: how long each server is loaded at -fixed-rate")
	flag.IntVar(&o.Variants, "variants", 256, "with -peer: distinct bodies of each review, sent in turn (own uid, variant annotation in the objects and last-applied); 1: the file as it is")
	flag.BoolVar(&o.ShadowVerify, "shadow-verify", false, "analyze every review pruned and whole in apply-hygiene and fail the run on any difference (costs a second analysis)")
	flag.BoolVar(&o.Installed, "installed", false, "like -peer, with the built binaries as separate processes: the floor, OPA's server, and apply-hygiene's server as the chart runs it against a local control plane; then RSS after -rss-after reviews")
	flag.StringVar(&o.ServerBinary, "server-binary", "", "with -installed: a prebuilt apply-hygiene server (build it as the image does) instead of the tree's")
	flag.IntVar(&o.RSSAfter, "rss-after", 100000, "with -installed: reviews each server gets in all before its VmRSS is read")
	flag.StringVar(&o.ProfileDir, "profile", "", "with -installed: directory for apply-hygiene's CPU and allocation profiles under load")
	flag.DurationVar(&o.ProfileDuration, "profile-duration", 20*time.Second, "with -profile: how long the CPU profile runs")
	flag.StringVar(&o.ServeFloor, "serve-floor", "", "serve the no-op floor on this loopback address (with -tls-cert, -tls-key) until interrupted")
	flag.StringVar(&o.TLSCert, "tls-cert", "", "with -serve-floor: serving certificate (PEM)")
	flag.StringVar(&o.TLSKey, "tls-key", "", "with -serve-floor: its key (PEM)")
	flag.Parse()
	// The in-process server of -peer logs through controller-runtime.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o Options) error {
	if o.ServeFloor != "" {
		return serveFloor(ctx, o)
	}
	if o.Workers == 0 {
		o.Workers = 4
		if o.Peer || o.Installed {
			o.Workers = 8
		}
	}
	if o.Installed {
		if o.Peer || o.Cluster {
			return errors.New("-installed, -peer and -cluster are separate runs")
		}
		return runInstalled(ctx, o)
	}
	if o.Peer {
		return runPeer(ctx, o)
	}
	if o.N <= 0 || o.Workers <= 0 || o.Duration <= 0 || o.Rate < 0 {
		return errors.New("-n, -workers and -duration must be positive, -rate not negative")
	}
	u, err := loopbackURL(o.URL)
	if err != nil {
		return err
	}
	reviews, err := readReviews(o.Reviews)
	if err != nil {
		return err
	}
	if !o.Cluster {
		if o.CA == "" {
			return errors.New("-ca is required without -cluster")
		}
		caPEM, err := os.ReadFile(o.CA)
		if err != nil {
			return fmt.Errorf("reading -ca: %w", err)
		}
		return loadAndReport(ctx, o, o.URL, caPEM, reviews)
	}
	return runCluster(ctx, o, u.Path, reviews)
}

func loadAndReport(ctx context.Context, o Options, url string, caPEM []byte, reviews []review) error {
	client, err := newClient(caPEM, o.Workers)
	if err != nil {
		return err
	}
	// Warm up: connections, TLS sessions, the server's caches.
	runLoad(ctx, loadOptions{url: url, client: client, reviews: reviews, n: 200, duration: o.Duration, workers: o.Workers})
	l := runLoad(ctx, loadOptions{url: url, client: client, reviews: reviews, n: o.N, duration: o.Duration, rate: o.Rate, workers: o.Workers})
	mode := "max"
	if o.Rate > 0 {
		mode = fmt.Sprintf("rate=%.0f/s", o.Rate)
	}
	fmt.Printf("reviews %s workers=%d: %s\n", mode, o.Workers, l)
	if o.ShadowVerify && l.errors > 0 {
		return fmt.Errorf("%d reviews were not answered (with -shadow-verify, a pruned analysis that differs from the whole one is one)", l.errors)
	}
	return nil
}

func runCluster(ctx context.Context, o Options, path string, reviews []review) (err error) {
	progress := func(msg string) { fmt.Println(time.Now().Format(time.TimeOnly), msg) }
	var serverArgs []string
	if o.ShadowVerify {
		serverArgs = append(serverArgs, "--shadow-verify")
	}
	c, err := startCluster(ctx, progress, "", serverArgs...)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, c.stop()) }()
	for _, r := range reviews {
		if err := c.createNamespace(ctx, r.namespace, nil); err != nil {
			return err
		}
	}
	if err := loadAndReport(ctx, o, c.url(path), c.cp.CAPEM(), reviews); err != nil {
		return err
	}
	mem, err := c.residentMemory(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("server resident memory after %d reviews: %s\n", o.N+200, mem)
	return measureAPIServer(ctx, c, o)
}

func runPeer(ctx context.Context, o Options) (err error) {
	if o.Cluster {
		return errors.New("-peer and -cluster are separate runs")
	}
	if o.Workers <= 0 || o.Round <= 0 || o.Rounds <= 0 || o.Variants <= 0 || o.FixedRate < 0 || (o.FixedRate > 0 && o.FixedDuration <= 0) {
		return errors.New("-workers, -round, -rounds, -variants and -fixed-duration must be positive, -fixed-rate not negative")
	}
	reviews, err := readReviews(o.Reviews)
	if err != nil {
		return err
	}
	refs, err := startReferences(ctx, reviews, o.ShadowVerify)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, refs.stop()) }()
	for _, s := range refs.servers {
		fmt.Printf("%s: %s\n", s.name, s.url)
	}
	_, err = sideBySide(ctx, os.Stdout, refs, reviews, sideOptions{workers: o.Workers, round: o.Round, rounds: o.Rounds,
		fixedRate: o.FixedRate, fixedDuration: o.FixedDuration, warmup: 200, variants: o.Variants, strict: o.ShadowVerify})
	return err
}

// updateAs returns a client-go update of c under field manager.
func updateAs(c *localCluster, manager string) func(context.Context, string, int) (time.Duration, error) {
	return func(ctx context.Context, ns string, i int) (time.Duration, error) {
		return c.update(ctx, ns, i, manager)
	}
}

// measureAPIServer compares writes through the API server in a namespace
// the webhook reviews and in one it ignores.
func measureAPIServer(ctx context.Context, c *localCluster, o Options) error {
	if err := c.createNamespace(ctx, reviewedNamespace, nil); err != nil {
		return err
	}
	if err := c.createNamespace(ctx, ignoredNamespace, map[string]string{"apply-hygiene.io/ignore": "true"}); err != nil {
		return err
	}
	apply := func(ctx context.Context, ns string, i int) (time.Duration, error) { return c.kubectlApply(ctx, ns, i) }
	if _, _, err := compare(ctx, 3, apply); err != nil { // create, and warm up
		return err
	}
	for _, m := range []struct {
		name   string
		rounds int
		f      func(context.Context, string, int) (time.Duration, error)
	}{
		// Both webhooks are called for a tool's update; the chart's
		// matchConditions spare the mutating call for kubectl's in-place
		// commands.
		{"client-go update (manager load)", o.Updates, updateAs(c, "load")},
		{"client-go update (manager kubectl-label)", o.Updates, updateAs(c, "kubectl-label")},
		{"kubectl apply", o.Applies, apply},
	} {
		if m.rounds == 0 {
			continue
		}
		reviewed, ignored, err := compare(ctx, m.rounds, m.f)
		if err != nil {
			return err
		}
		fmt.Printf("%s with the webhook:    %s\n", m.name, reviewed)
		fmt.Printf("%s without the webhook: %s\n", m.name, ignored)
		fmt.Printf("%s ratio with/without: p50 %.3f, mean %.3f\n", m.name,
			float64(reviewed.quantile(0.5))/float64(ignored.quantile(0.5)), float64(reviewed.mean())/float64(ignored.mean()))
	}
	return nil
}
