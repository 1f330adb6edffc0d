// Package diff is `kubectl hygiene diff`: it recomputes kubectl apply -f
// (or -k) against the live objects, read from the cluster or from --live,
// as kubectl does (strategic merge patch for built-in kinds, JSON merge
// patch for the others), prints each patch and result, and has the
// UPDATE each apply sends reviewed as apply-hygiene's webhooks review it
// (judge.Webhooks.Apply): the findings are what admission will answer. An
// unchanged object sends nothing and shows what explain finds in it. The
// exit status is 1 when admission would deny the apply, as kubectl diff
// exits 1 on differences, and more on errors. Options follows kubectl's
// Complete → Validate → Run; the root command gives it the cluster
// (cluster.ConnectFunc) and the analyzer. See ExampleNewCmd.
package diff
