// Package handover is `kubectl hygiene handover`: it hands fields over to
// their new writer by deleting them from the object's last-applied, in one
// JSON patch guarded by a test of the annotation as read. Options follows
// kubectl's Complete → Validate → Run; the root command gives it the
// cluster (Cluster, ConnectFunc) and the manifest reader (ReadFunc). See
// ExampleNewCmd.
package handover
