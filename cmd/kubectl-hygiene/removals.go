package main

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/internal/review"
)

var _ review.RemovalProver = judgeCluster{}

// RemovalSticks gives the review core the removal proofs of the server
// (kube.Cluster.RemovalSticks), with the user's own credentials when
// connected, so that diff predicts the orphans the webhook reports; none
// offline (--live), where the orphans keep merge's judgement as they do
// when the server cannot make a proof.
func (c judgeCluster) RemovalSticks(ctx context.Context, _ schema.GroupVersionResource, live, target *unstructured.Unstructured, pointer string) (kube.RemovalVerdict, error) {
	if c.j.removals == nil {
		return "", errors.New("no removal proof offline")
	}
	return c.j.removals(ctx, live, target, pointer)
}

// removalSticks proves a removal from the live object of target's kind.
func (c *cluster) removalSticks(ctx context.Context, live, target *unstructured.Unstructured, pointer string) (kube.RemovalVerdict, error) {
	if c.prover == nil {
		return "", errors.New("no removal proof without a connection")
	}
	gvk := live.GroupVersionKind()
	mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", gvk, err)
	}
	return c.prover.RemovalSticks(ctx, mapping.Resource, live, target, pointer)
}
