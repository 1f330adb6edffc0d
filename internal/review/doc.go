// Package review is the review core that every admission pass shares:
// for one AdmissionRequest it decodes the objects, classifies the write
// (client- or server-side apply, imperative edit, rollout undo, restart,
// scale, save-config, a controller's write), runs merge on it, asks the
// policies and returns the facts and the decisions (Reviewer.Review); it
// carries out repair and prune decisions on the object (Review.Repair).
// Reviewer.ReviewUpdate is the same review of an UPDATE given as its old
// and new object, without an AdmissionRequest: `kubectl hygiene diff`
// reviews the UPDATE it predicts kubectl apply will send through it, so
// that what diff predicts is what admission says.
//
//	decode → classify → merge (facts) → policy (decisions)
//
// The objects take one path: the webhook decodes them with the
// AdmissionReview and calls ReviewDecoded; Review, for a driver that holds
// them raw, decodes them into the same maps (DecodeObjects) and calls it;
// decode.go holds the one set of checks.
//
// It has no HTTP and no admission responses. The drivers wrap it: the
// webhook package turns a Review into controller-runtime admission
// responses (with the API server's deadline, metrics and logs), one pass
// per call as the API server calls each webhook; `kubectl hygiene test`
// (captured AdmissionReviews) and `kubectl hygiene diff` (predicted
// applies) run both passes with Reviewer.Admit and AdmitRequest (Mutate,
// its repairs carried out, then Validate on the repaired object) without
// importing the webhook. Pass.Actions says which decisions each pass acts
// on, for every driver. review imports neither of them; it reads the
// cluster through the small Cluster interface (a *kube.Cluster in the
// server) and decides through Evaluator (a *policy.Engine). A Cluster that
// is also an AutoscalerCluster gives the HorizontalPodAutoscalers that
// scale the object (input.autoscaling); a failed lookup leaves them out.
// A /scale write is reviewed as its parent with the new count at the field
// the Scale sets: spec.replicas for the built-in kinds, the CRD's
// specReplicasPath for a custom resource, from a Cluster that is also a
// ScaleCluster; when that field cannot be known, the write is not
// reviewed.
//
// See ExampleReviewer.
package review
