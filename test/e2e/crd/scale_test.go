package crd_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// installQueueCRD applies the Queue CRD, whose /scale sets spec.size, and
// waits until it is established.
func installQueueCRD(t *testing.T, k framework.Kubectl) {
	t.Helper()
	k.Run(t, "apply", "-f", "testdata/queue-crd.yaml").MustSucceed(t)
	k.Run(t, "wait", "--for=condition=Established", "crd/queues.example.com", "--timeout=60s").MustSucceed(t)
}

// queueScaleDenial is the [imperative-edit] message for kubectl scale
// --replicas=0 of queues.example.com/orders, whose manifest has size 3.
func queueScaleDenial(ns string) string {
	return fmt.Sprintf("[imperative-edit] Queue %s/orders: this write by %s changes fields that last-applied owns: spec.size (last-applied 3, now 0); "+
		"the next kubectl apply puts the last-applied values back without a word. Put the change in your manifest and run kubectl apply, "+
		"or hand a field over to its new writer by deleting it from last-applied first with: kubectl hygiene handover queues.example.com/orders -n %s spec.size",
		ns, controlplane.AdminUser, ns)
}

// The /scale of a custom resource sets the field its CRD names
// (subresources.scale.specReplicasPath), here spec.size: a person's
// kubectl scale to 0 of a Queue whose manifest owns spec.size is the
// imperative-edit denial at spec.size, and nothing is written.
func TestScaleOfCustomResourceIsReviewedAtItsSpecReplicasPath(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	installQueueCRD(t, k)
	framework.ApplyPredicted(t, k, "testdata/queue-size.yaml").MustSucceed(t)

	denied := k.Run(t, "scale", "queues.example.com/orders", "--replicas=0").MustFail(t)
	framework.WantLines(t, denied.Stderr, "Error from server (Forbidden): "+framework.DeniedPrefix+queueScaleDenial(f.Namespace))
	framework.WantLines(t, k.JSONPath(t, "queues.example.com/orders", "{.spec}"), `{"size":3}`)
}

// A Queue whose manifest owns an unrelated spec.replicas, and not
// spec.size: kubectl scale sets spec.size, which the manifest leaves to
// it, and passes without a word; spec.replicas stays as applied.
func TestScaleOfCustomResourceLeavesAnUnrelatedReplicasAlone(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	installQueueCRD(t, k)
	framework.ApplyPredicted(t, k, "testdata/queue-replicas.yaml").MustSucceed(t)

	scaled := k.Run(t, "scale", "queue/events", "--replicas=2").MustSucceed(t)
	framework.WantLines(t, scaled.Stdout, "queue.example.com/events scaled")
	framework.WantLines(t, scaled.Stderr)
	framework.WantLines(t, k.JSONPath(t, "queue/events", "{.spec}"), `{"replicas":3,"size":2}`)
}

// The hand-over command that the denial of a Queue's scale prints, run as
// printed: kubectl finds the plugin, which resolves queues.example.com/orders through
// discovery and hands spec.size (its CRD's specReplicasPath) over; the
// scale to 0 then passes.
func TestScaleOfCustomResourcePassesAfterThePrintedHandover(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	installQueueCRD(t, k)
	framework.ApplyPredicted(t, k, "testdata/queue-size.yaml").MustSucceed(t)

	denied := k.Run(t, "scale", "queues.example.com/orders", "--replicas=0").MustFail(t)
	framework.WantLines(t, denied.Stderr, "Error from server (Forbidden): "+framework.DeniedPrefix+queueScaleDenial(f.Namespace))
	_, command, found := strings.Cut(denied.Stderr, "first with: ")
	if !found {
		t.Fatalf("no hand-over command in %q", denied.Stderr)
	}
	out := k.RunPrinted(t, strings.TrimSpace(command))
	framework.WantLines(t, strings.TrimSpace(out),
		"Queue "+f.Namespace+"/orders: last-applied no longer has spec.size",
		"The next kubectl apply neither sets nor deletes them: they are their new writer's.",
		"Drop them from your manifest too: an apply of a manifest that sets them takes them back.")

	scaled := k.Run(t, "scale", "queues.example.com/orders", "--replicas=0").MustSucceed(t)
	framework.WantLines(t, scaled.Stdout, "queue.example.com/orders scaled")
	framework.WantLines(t, scaled.Stderr)
	framework.WantLines(t, k.JSONPath(t, "queues.example.com/orders", "{.spec}"), `{"size":0}`)
}
