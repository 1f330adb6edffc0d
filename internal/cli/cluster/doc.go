// Package cluster is the API server as the kubectl plugin's live verbs
// see it: Cluster reads and patches objects, reads the installed chart's
// policy configuration and user policies (Installation), the user the
// server authenticates (WhoAmI), namespace labels, autoscalers and the
// server's removal proofs; Schemas gives the analyzer the structural
// schemas of the first cluster a verb connects to. Connect connects with
// kubectl's connection flags, which Flags registers and connects with for
// a verb; New wraps a client for tests. See ExampleCluster_Get and
// ExampleFlags_Connect.
package cluster
