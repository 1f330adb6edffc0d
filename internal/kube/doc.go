// Package kube reads from the API server what the reviews need beyond the
// object under review: an object by name (the parent of a /scale request),
// the field a custom resource's /scale sets (Cluster.ScaleReplicasPath,
// from its CRD),
// the revisions of a workload (its ReplicaSets or ControllerRevisions, by
// its own selector) and the labels of a namespace, with a short cache;
// the HorizontalPodAutoscalers that scale an object (Cluster.Autoscalers:
// from the informer cache of Autoscalers in the server; ListAutoscalers
// for a one-off lookup);
// and, in Schemas, the structural schemas of custom resources from the
// API server's OpenAPI v3 documents, kept current (merge.WithSchemas).
// That is its one job.
//
// The webhook and the audit both read through a Cluster, so admission and
// the audit find revisions the same way; each declares the small interface
// it needs and Cluster satisfies both. kube imports neither of them.
//
// See ExampleCluster.
package kube
