package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

// The audit leader makes the ConfigMap the owner of each audit Lease that
// exists, once, keeping the owners a Lease has; it is done when both carry
// it.
func TestLeaseOwnerAdoptsTheAuditLeases(t *testing.T) {
	const ns, cmName, uid = "apply-hygiene", "apply-hygiene-config", types.UID("cm-uid")
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: cmName, UID: uid}
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "someone-else", UID: "other-uid"}
	lease := func(name string, owners ...metav1.OwnerReference) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: owners}}
	}
	tests := map[string]struct {
		leases   []runtime.Object
		wantDone bool
		want     map[string][]metav1.OwnerReference
	}{
		"both leases get the owner": {
			leases:   []runtime.Object{lease(auditElectionLease), lease(auditScheduleLease)},
			wantDone: true,
			want:     map[string][]metav1.OwnerReference{auditElectionLease: {owner}, auditScheduleLease: {owner}},
		},
		"before the first scan the schedule lease does not exist yet": {
			leases: []runtime.Object{lease(auditElectionLease)},
			want:   map[string][]metav1.OwnerReference{auditElectionLease: {owner}},
		},
		"an owner already there is kept, and the reference is not doubled": {
			leases:   []runtime.Object{lease(auditElectionLease, other), lease(auditScheduleLease, owner)},
			wantDone: true,
			want:     map[string][]metav1.OwnerReference{auditElectionLease: {other, owner}, auditScheduleLease: {owner}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cmName, UID: uid}}
			client := fake.NewClientset(append([]runtime.Object{cm}, tc.leases...)...)
			o := &leaseOwner{client: client, namespace: ns, configMap: cmName, leases: []string{auditElectionLease, auditScheduleLease}}
			done, err := o.adopt(t.Context())
			if err != nil {
				t.Fatalf("adopt: %v", err)
			}
			if done != tc.wantDone {
				t.Errorf("done = %v, want %v", done, tc.wantDone)
			}
			got := map[string][]metav1.OwnerReference{}
			list, err := client.CoordinationV1().Leases(ns).List(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range list.Items {
				got[l.Name] = l.OwnerReferences
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("the leases' owners (-want +got):\n%s", diff)
			}
		})
	}
}
