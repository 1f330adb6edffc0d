package review

import (
	"context"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
)

// ScaleCluster is a Cluster that also knows where the /scale subresource
// of a custom resource keeps its count; a *kube.Cluster is one (it reads
// the CRD). A Cluster without it (a captured review, a test) knows only
// the built-in kinds': a /scale write of a custom resource is then not
// reviewed.
type ScaleCluster interface {
	// ScaleReplicasPath returns the path of the field that the /scale
	// subresource of gvr sets (its CRD's specReplicasPath), or an error
	// when it cannot be known.
	ScaleReplicasPath(ctx context.Context, gvr schema.GroupVersionResource) ([]string, error)
}

var _ ScaleCluster = (*kube.Cluster)(nil)

// builtinScales are the built-in resources with a /scale subresource; all
// of them keep the count at spec.replicas.
var builtinScales = map[schema.GroupResource]bool{
	{Group: "apps", Resource: "deployments"}:        true,
	{Group: "apps", Resource: "replicasets"}:        true,
	{Group: "apps", Resource: "statefulsets"}:       true,
	{Group: "", Resource: "replicationcontrollers"}: true,
}

// scaleReplicasPath returns the path of the field that a /scale write of
// gvr sets: spec.replicas for the built-in kinds, the CRD's
// specReplicasPath for a custom resource. ok is false when it cannot be
// known (the CRD unreadable, a Cluster that reads none): the write is then
// not reviewed, since a guess at spec.replicas would judge a field the
// write does not touch. That is logged at debug level.
func (r *Reviewer) scaleReplicasPath(ctx context.Context, gvr schema.GroupVersionResource) (path []string, ok bool) {
	if builtinScales[gvr.GroupResource()] {
		return []string{"spec", "replicas"}, true
	}
	logger := logr.FromContextOrDiscard(ctx).V(1)
	sc, found := r.cluster.(ScaleCluster)
	if !found {
		logger.Info("scale path of a custom resource unknown, not reviewing the scale", "resource", gvr.String())
		return nil, false
	}
	path, err := sc.ScaleReplicasPath(ctx, gvr)
	if err != nil {
		logger.Info("scale path of a custom resource unknown, not reviewing the scale", "resource", gvr.String(), "error", err.Error())
		return nil, false
	}
	return path, true
}
