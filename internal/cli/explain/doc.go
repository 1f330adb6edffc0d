// Package explain is `kubectl hygiene explain`: it lists every field of a
// live object, read from the cluster (KIND/NAME) or from a file that
// kubectl get -o yaml wrote (--live), with its owners and whether it
// drifted from last-applied or is an orphan, and the findings the audit's
// rules make on the object (judge.Judge.Explain). Options follows
// kubectl's Complete → Validate → Run; the root command gives it the
// cluster (cluster.ConnectFunc) and the analyzer. See ExampleNewCmd.
package explain
