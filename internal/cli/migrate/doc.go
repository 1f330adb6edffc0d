// Package migrate is `kubectl hygiene migrate --server-side`: it plans and
// carries out the move of objects from client-side to server-side apply
// (the managedFields upgrade kubectl's csaupgrade makes, guarded by the
// resourceVersion read), and reports each object's outcome. Options
// follows kubectl's Complete → Validate → Run; the root command gives it
// the cluster (Cluster, ConnectFunc). See ExampleNewCmd.
package migrate
