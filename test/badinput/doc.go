// Package badinput holds the bad-input corpus of the admission webhook:
// one AdmissionReview per case in testdata/ (generated from a review that
// kube-apiserver really sent, see testdata/README.md), each sent through
// the webhook endpoints for both the validating and the mutating handler
// with the real policy engine and a fake cluster. Every case gets a clear
// answer — allowed, denied with a message, or HTTP 400 — within a time
// bound: never a 500, a panic or a hang. HTTP 400 is for bodies that no
// API server sends; a request that kube-apiserver can send (a Scale to
// zero, whose spec is {}) is reviewed like any other.
//
// Regenerate the corpus with `go test ./test/badinput -update`.
package badinput
