package reliability_test

import (
	"context"
	"errors"
	"testing"
	"time"

	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
)

// autoscalerCalls returns the calls of the server's HorizontalPodAutoscaler
// cache (kube.Autoscalers, which every review reads), recorded on a fake
// typed client until the cache has synced: its one list and its watch.
func autoscalerCalls(t *testing.T) []string {
	t.Helper()
	client := kubefake.NewClientset()
	a, err := kube.NewAutoscalers(client)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = a.Start(ctx) }()
	obj := workload("Deployment", "a")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := a.Targeting(obj); !errors.Is(err, kube.ErrAutoscalersNotSynced) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the HorizontalPodAutoscaler cache did not sync in 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	seen := map[string]bool{}
	for _, act := range client.Actions() {
		gvr := act.GetResource()
		seen[gvr.Group+"/"+gvr.Resource+" "+act.GetVerb()] = true
	}
	return sortedKeys(seen)
}
