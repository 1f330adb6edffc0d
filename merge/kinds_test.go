package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAnalyzeApplyOfBuiltInKinds analyzes, for every built-in kind beyond
// apps/v1 that issue 15 names, the apply of v2 onto the object captured
// from a real API server after a kubectl command added a field outside
// the manifest and another changed a field that last-applied owns
// (testdata/kinds/<kind>, from test/e2e/merge TestDifferentialKinds). The
// server's allocated and defaulted fields (a Service's clusterIPs,
// ipFamilies, sessionAffinity, the port's protocol; a Job's selector and
// controller-uid labels; a Secret's type; a Namespace's name label) are
// neither orphans nor reverts: exactly the addition is orphaned (but a
// CronJob's suspend, its state) and the change reverted.
func TestAnalyzeApplyOfBuiltInKinds(t *testing.T) {
	tests := map[string]struct {
		orphans, reverts []string
	}{
		"service":        {orphans: []string{"spec.ports[port=9090,protocol=TCP]"}, reverts: []string{"spec.ports[port=80,protocol=TCP].targetPort"}},
		"configmap":      {orphans: []string{"data.extra"}, reverts: []string{"data.mode"}},
		"secret":         {orphans: []string{"data.extra"}, reverts: []string{"data.password"}},
		"serviceaccount": {orphans: []string{"secrets[name=builder-token]"}, reverts: []string{"automountServiceAccountToken"}},
		"namespace":      {orphans: []string{"metadata.annotations[example.com/owner]"}, reverts: []string{"metadata.labels.team"}},
		"ingress":        {orphans: []string{"spec.tls"}, reverts: []string{"spec.ingressClassName"}},
		"networkpolicy":  {orphans: []string{"spec.egress"}, reverts: []string{"spec.ingress"}},
		// A suspend that kubectl patch set is the CronJob's state, not an
		// orphan: removing it would start the schedule again.
		"cronjob": {reverts: []string{"spec.jobTemplate.spec.template.spec.containers[name=app].image"}},
		"job":     {orphans: []string{"spec.activeDeadlineSeconds"}, reverts: []string{"spec.parallelism"}},
		// The patch set spec.behavior.scaleDown.stabilizationWindowSeconds;
		// the server defaulted the rest of spec.behavior around it: one
		// orphan, removed whole.
		"hpa": {orphans: []string{"spec.behavior"}, reverts: []string{"spec.maxReplicas"}},
		// A manager that owns the labels map itself (".") owns none of the
		// labels that others set: the server's controller-uid and
		// job-name labels stay nobody's, team is kubectl-edit's alone.
		"job-label-node":     {orphans: []string{"metadata.labels.team", "spec.activeDeadlineSeconds"}, reverts: []string{"spec.parallelism"}},
		"pdb":                {orphans: []string{"spec.unhealthyPodEvictionPolicy"}, reverts: []string{"spec.minAvailable"}},
		"role":               {orphans: []string{"metadata.annotations[example.com/reviewed-by]"}, reverts: []string{"rules"}},
		"rolebinding":        {orphans: []string{"metadata.labels.team"}, reverts: []string{"subjects"}},
		"clusterrole":        {orphans: []string{"metadata.labels.team"}, reverts: []string{"rules"}},
		"clusterrolebinding": {orphans: []string{"metadata.annotations[example.com/ticket]"}, reverts: []string{"subjects"}},
		// A field a person set outside apply whose value is the server's
		// default is no orphan: removing it, as the warning's command
		// says, brings the same value back (isServerDefault). The port
		// kubectl patch added, adopted into the manifest, keeps the
		// defaulted targetPort and protocol; the CronJob's suspend is
		// back to its default false.
		"service-port-adopted":    {reverts: []string{"spec.ports[port=80,protocol=TCP].targetPort"}},
		"cronjob-suspend-default": {reverts: []string{"spec.jobTemplate.spec.template.spec.containers[name=app].image"}},
	}
	a := NewAnalyzer()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			live := readObject(t, "kinds/"+name, "live.yaml")
			manifest := readObject(t, "kinds/"+name, "modified.yaml")
			manifest.SetNamespace(live.GetNamespace()) // as kubectl does for -n
			_, an, err := a.predictApply(live, manifest)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.orphans, paths(an.Orphans)); diff != "" {
				t.Errorf("orphans (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.reverts, paths(an.Reverts)); diff != "" {
				t.Errorf("reverts (-want +got):\n%s", diff)
			}
			if an.ReplicasReset != nil || len(an.DefaultedDependents) > 0 {
				t.Errorf("replicas reset %v, defaulted dependents %v: the workload-only facts on a %s", an.ReplicasReset, an.DefaultedDependents, live.GetKind())
			}
		})
	}
}
