package main

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// leaseOwner makes the audit's Leases (the leader election's and the
// schedule's) owned by a ConfigMap of the release (--lease-owner-configmap,
// the chart's configuration), so that helm uninstall, which deletes the
// ConfigMap, has the garbage collector delete them: the server cannot
// (Helm deletes its Role while it shuts down), and the schedule Lease must
// outlive every pod. It runs in the leader, which writes both, until both
// carry the reference (the schedule Lease appears after the first scan).
type leaseOwner struct {
	client    kubernetes.Interface
	namespace string
	configMap string
	leases    []string
	every     time.Duration
}

var (
	_ manager.Runnable               = (*leaseOwner)(nil)
	_ manager.LeaderElectionRunnable = (*leaseOwner)(nil)
)

// NeedLeaderElection implements manager.LeaderElectionRunnable: only the
// leader writes the Leases.
func (o *leaseOwner) NeedLeaderElection() bool { return true }

// Start sets the owner on each Lease, every o.every until all carry it.
func (o *leaseOwner) Start(ctx context.Context) error {
	logger := log.FromContext(ctx)
	for failures := 0; ; {
		done, err := o.adopt(ctx)
		switch {
		case err != nil:
			// Once at info, then at debug: it retries, and at helm
			// uninstall (the Role gone) it is expected.
			l := logger
			if failures++; failures > 1 {
				l = logger.V(1)
			}
			l.Info("could not set the audit leases' owner yet; retrying", "configMap", o.configMap, "error", err.Error())
		case done:
			logger.V(1).Info("the audit leases are owned by the release's ConfigMap", "configMap", o.configMap, "leases", o.leases)
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(o.every):
		}
	}
}

// adopt sets the owner reference on every Lease that exists and lacks it;
// it reports whether all of them carry it.
func (o *leaseOwner) adopt(ctx context.Context) (bool, error) {
	cm, err := o.client.CoreV1().ConfigMaps(o.namespace).Get(ctx, o.configMap, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Errorf("reading configmap %s/%s: %w", o.namespace, o.configMap, err)
	}
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID}
	all := true
	for _, name := range o.leases {
		leases := o.client.CoordinationV1().Leases(o.namespace)
		lease, err := leases.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			all = false
			continue
		}
		if err != nil {
			return false, fmt.Errorf("reading lease %s/%s: %w", o.namespace, name, err)
		}
		if ownedBy(lease.OwnerReferences, owner) {
			continue
		}
		lease.OwnerReferences = append(lease.OwnerReferences, owner)
		_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			all = false // renewed meanwhile: the next round
			continue
		}
		if err != nil {
			return false, fmt.Errorf("updating lease %s/%s: %w", o.namespace, name, err)
		}
	}
	return all, nil
}

func ownedBy(refs []metav1.OwnerReference, owner metav1.OwnerReference) bool {
	for _, r := range refs {
		if r.UID == owner.UID {
			return true
		}
	}
	return false
}
