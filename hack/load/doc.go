// Command load measures apply-hygiene under load. It only ever talks to
// loopback addresses, and it stops by itself: every run is bounded in
// count (-n) and time (-duration; with -peer, -round × -rounds and
// -fixed-duration).
//
// Against a running server (make dev-up, or any apply-hygiene listening on
// 127.0.0.1), it sends AdmissionReviews over HTTPS with keep-alive, at a
// fixed rate (-rate) or as fast as -workers workers can, and prints p50,
// p99, p99.9 and the throughput:
//
//	go run ./hack/load -url https://127.0.0.1:PORT/validate -ca ca.crt \
//	    -reviews 'webhook/testdata/bench/typical-*.json' -workers 4 -n 20000
//
// With -cluster it starts a local control plane (test/e2e/framework/controlplane) and
// the server (test/e2e/framework/devenv) itself, runs the same HTTPS load against it,
// reads the server's resident memory from its metrics, then measures
// updates through the API server (client-go, and kubectl apply) in a
// namespace the webhook reviews and in one it ignores, interleaved, and
// prints their latencies and ratio. It stops everything before it exits.
//
//	go run ./hack/load -cluster -n 100000 -updates 300 -applies 30
//
// With -peer it starts four servers side by side, each on its own
// loopback HTTPS port with a certificate of a CA made in-process: a no-op
// that reads only request.uid, a no-op that decodes the whole review (the
// floor), OPA with the hand-written Rego of peer/*.rego (the peer), and
// apply-hygiene in-process on controller-runtime's webhook server, with
// its Cluster on an in-memory client holding the reviews' captured
// objects. For each review, sent as -variants distinct bodies (own uid,
// a variant annotation in the objects and last-applied) so that no cache
// answers from memory, it loads the servers in turn, -round each,
// -rounds times, with -workers clients (default 8), then the peer and
// apply-hygiene at -fixed-rate for -fixed-duration, and prints markdown
// tables and the ratios of the performance goals (docs/performance.md):
//
//	go run ./hack/load -peer                                  # make load
//	go run ./hack/load -peer -round 1s -rounds 1 -fixed-duration 1s
//
// With -installed it runs the same side by side with the binaries a user
// runs, each its own process on its own loopback HTTPS port: the no-op
// floor (this program, -serve-floor), OPA's own server (opa run --server
// with TLS, built with go install at go.mod's version of OPA, cached in
// the user's cache directory) with peer/*.rego and peer/opa/system.rego,
// which answers the AdmissionReview at POST /, and apply-hygiene's server
// built as the image is, run by test/e2e/framework/devenv with the chart's flags and
// GOMEMLIMIT against a local control plane (so its events, logging and
// metrics are on as in a cluster). After the rounds and the fixed rate,
// each server gets what it lacks of -rss-after reviews and its VmRSS is
// read from /proc/<pid>/status; -profile DIR then takes the server's CPU
// profile under load and its allocation profile (--pprof-bind-address):
//
//	go run ./hack/load -installed                      # make load-installed
//	go run ./hack/load -installed -round 1s -rounds 1 -fixed-duration 1s -rss-after 3000
//
// -shadow-verify (with -peer or -cluster) makes apply-hygiene analyze
// every review twice, pruned and whole (merge.WithShadowVerify), and fails
// the run when it could not answer a review: a difference between the
// two is answered as an internal error.
//
// Reviews that need cluster reads the load cannot provide (the parent of a
// /scale, the revisions of an undo) are best left out: with -cluster the
// tool only creates the reviews' namespaces.
package main
