package callcount_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// With kinds=all the webhooks see every kind but what must never be
// intercepted: a person's kubectl label (a write both other conditions let
// through) of an Event, a Lease, Endpoints, an EndpointSlice or an
// APIService reaches neither webhook, while the same label of a
// PersistentVolume and a Pod, kinds outside the common preset, is
// reviewed.
func TestAllNeverInterceptsWhatMustNotBe(t *testing.T) {
	f := framework.New(t)
	framework.Reconfigure(t, "kinds=all")
	suffix := strconv.FormatInt(time.Now().UnixNano()%100000, 10)
	r := run{f: f, suffix: suffix}
	apply(t, r, "bookkeeping.yaml")
	apply(t, r, "settings.yaml")
	pv, apiService := "callcount-"+suffix, "v1alpha1.callcount"+suffix+".example.com"
	applyStdin(t, r, fmt.Sprintf(`apiVersion: v1
kind: Event
metadata:
  name: started
involvedObject: {kind: ConfigMap, name: settings, namespace: %[4]s}
reason: Started
message: started
type: Normal
---
apiVersion: events.k8s.io/v1
kind: Event
metadata:
  name: scheduled
eventTime: "2026-01-01T00:00:00.000000Z"
reportingController: example.com/operator
reportingInstance: operator-0
action: Schedule
reason: Scheduled
type: Normal
regarding: {kind: ConfigMap, name: settings, namespace: %[4]s}
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: %[1]s
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /tmp/callcount}
---
apiVersion: v1
kind: Pod
metadata:
  name: lonely
spec:
  containers:
    - name: lonely
      image: busybox:1.37
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: %[2]s
spec:
  group: callcount%[3]s.example.com
  version: v1alpha1
  groupPriorityMinimum: 1000
  versionPriority: 15
  insecureSkipTLSVerify: true
  service: {name: nowhere, namespace: %[4]s}
`, pv, apiService, suffix, f.Namespace))
	t.Cleanup(func() {
		// No persistentvolume-protection controller removes the PV's
		// finalizer: do not wait for it.
		f.Kubectl.Run(t, "delete", "apiservice/"+apiService, "persistentvolume/"+pv, "--ignore-not-found", "--wait=false")
	})
	label := func(t *testing.T, object string, i int) int {
		t.Helper()
		before := read(t, f)
		f.Kubectl.Run(t, "label", "--overwrite", object, "touched="+strconv.Itoa(i)).MustSucceed(t)
		after := read(t, f)
		return delta(before, after, func(c counts) float64 { return c.reviews("validate") + c.reviews("mutate") })
	}
	// The API server picks the new rules up in the background.
	i := 0
	framework.Eventually(t, 30*time.Second, "the API server calling the webhook for a PersistentVolume", func(context.Context) (bool, error) {
		i++
		return label(t, "persistentvolume/"+pv, i) > 0, nil
	})
	tests := []struct {
		object string
		want   int
	}{
		{"events/started", 0},
		{"events.v1.events.k8s.io/scheduled", 0},
		{"leases.v1.coordination.k8s.io/operator-leader", 0},
		{"endpoints/external", 0},
		{"endpointslices.v1.discovery.k8s.io/external-1", 0},
		{"apiservices.v1.apiregistration.k8s.io/" + apiService, 0},
		{"persistentvolume/" + pv, 1},
		{"pod/lonely", 1},
		{"configmap/settings", 1},
	}
	for _, tc := range tests {
		t.Run(tc.object, func(t *testing.T) {
			i++
			if got := label(t, tc.object, i); got != tc.want {
				t.Errorf("kubectl label %s: the webhooks reviewed %d requests, want %d", tc.object, got, tc.want)
			}
		})
	}
}
