package kinds_test

import (
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// webService is a Service that leaves its type and session affinity to
// the server (ClusterIP, None), with the label release, plus what a
// case's manifest adds to spec. An apply that changes nothing but
// last-applied is a hand-over (save-config), which no orphan rule judges:
// each next apply changes the label too.
func webService(release, spec string) string {
	return `apiVersion: v1
kind: Service
metadata:
  name: web
  labels: {release: ` + release + `}
spec:
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 8080
` + spec
}

// A value the server would put straight back is no orphan, whoever owns
// it: a person switches a discriminator with kubectl patch, the server
// defaults what comes with it (owned by kubectl-patch), the manifest then
// adopts the discriminator but not the defaults. Removing one of them
// would only bring it back, so the apply says nothing. A value a person
// set that is not the server's (externalTrafficPolicy: Local) still is an
// orphan: its removal sticks (the server puts Cluster there instead).
// kubectl hygiene audit and explain agree.
func TestValueTheServerPutsBackIsNoOrphan(t *testing.T) {
	tests := map[string]struct {
		patch, spec string
		// orphan is the warning of the apply after the patch (with the
		// placeholders of expand); empty: the apply prints nothing.
		orphan string
		// explain is the line of kubectl hygiene explain (columns) for
		// the value the server puts back: no orphan status.
		explain string
	}{
		"a Service patched to NodePort, then applied as NodePort: no orphan (externalTrafficPolicy, nodePort)": {
			patch:   `{"spec":{"type":"NodePort"}}`,
			spec:    "  type: NodePort\n",
			explain: `spec.externalTrafficPolicy "Cluster" kubectl-patch -`,
		},
		"a Service patched to LoadBalancer, then applied as LoadBalancer: no orphan (allocateLoadBalancerNodePorts)": {
			patch:   `{"spec":{"type":"LoadBalancer"}}`,
			spec:    "  type: LoadBalancer\n",
			explain: `spec.allocateLoadBalancerNodePorts true kubectl-patch -`,
		},
		"a Service patched to ClientIP affinity, then applied with it: no orphan (sessionAffinityConfig)": {
			patch:   `{"spec":{"sessionAffinity":"ClientIP"}}`,
			spec:    "  sessionAffinity: ClientIP\n",
			explain: `spec.sessionAffinityConfig.clientIP.timeoutSeconds 10800 kubectl-patch -`,
		},
		"a Service patched to NodePort with externalTrafficPolicy Local, then applied as NodePort: Local is an orphan": {
			patch: `{"spec":{"type":"NodePort","externalTrafficPolicy":"Local"}}`,
			spec:  "  type: NodePort\n",
			orphan: `Warning: [orphaned-field] Service $NS/web: spec.externalTrafficPolicy ("Local", set by kubectl-patch at $TS) ` +
				`is in neither your manifest nor last-applied, so kubectl apply will never remove it. Remove it with: kubectl patch services/web -n $NS ` +
				`--type=json -p '[{"op":"test","path":"/spec/externalTrafficPolicy","value":"Local"},{"op":"remove","path":"/spec/externalTrafficPolicy"}]'`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := framework.New(t)
			k := f.Kubectl
			pred := framework.NewPredictor(t)
			v1 := framework.WriteFile(t, "v1.yaml", webService("v1", ""), 0o644)
			v2 := framework.WriteFile(t, "v2.yaml", webService("v2", tc.spec), 0o644)
			created := pred.Apply(t, k, v1).MustSucceed(t)
			framework.WantLines(t, created.Stderr)

			patched := k.Run(t, "patch", "service/web", "-p", tc.patch).MustSucceed(t)
			framework.WantLines(t, patched.Stdout, "service/web patched")
			framework.WantLines(t, patched.Stderr)

			applied := pred.Apply(t, k, v2).MustSucceed(t)
			framework.WantLines(t, applied.Stdout, "service/web configured")
			if tc.orphan == "" {
				framework.WantLines(t, applied.Stderr)
				// The audit proves the same way (with the user's
				// credentials here).
				k.Env = []string{"PATH=" + filepath.Dir(framework.HygieneBinary(t)) + ":" + os.Getenv("PATH")}
				audit := k.Run(t, "hygiene", "audit", "--kind", "services").MustSucceed(t)
				framework.WantLines(t, audit.Stdout, "No findings in 1 objects.")
				explain := k.Run(t, "hygiene", "explain", "service/web").MustSucceed(t)
				if !slices.Contains(strings.Split(columns(explain.Stdout), "\n"), tc.explain) {
					t.Errorf("kubectl hygiene explain has no line %q:\n%s", tc.explain, explain.Stdout)
				}
				return
			}
			framework.WantMatch(t, applied.Stderr, expand(f.Namespace, []string{tc.orphan})...)
		})
	}
}

// recreated is a StatefulSet and a NodePort Service: the kinds whose
// server-set values the table of defaults does not all know
// (persistentVolumeClaimRetentionPolicy, updateStrategy's maxUnavailable,
// the allocated node ports).
const recreated = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  labels: {release: v1}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: db
        image: registry.k8s.io/pause:3.10
---
apiVersion: v1
kind: Service
metadata:
  name: db
  labels: {release: v1}
spec:
  type: NodePort
  selector: {app: db}
  ports:
  - port: 80
`

// A re-creation owns its defaults as kubectl create does: after kubectl
// replace --force (a delete, then a create under kubectl-replace), delete
// then create, or replace --force --save-config, the apply of the
// manifest (with a new label: see webService) finds no orphan in the
// server's defaults. Without last-applied
// it says only that (missing-last-applied), with it nothing.
func TestRecreationOwnsItsDefaults(t *testing.T) {
	tests := map[string]struct {
		// recreate are the commands; FILE stands for the manifest.
		recreate [][]string
		// missingLastApplied: the apply warns that there was none.
		missingLastApplied bool
	}{
		"kubectl replace --force": {
			recreate:           [][]string{{"replace", "--force", "-f", "FILE"}},
			missingLastApplied: true,
		},
		"kubectl replace --force --save-config": {
			recreate: [][]string{{"replace", "--force", "--save-config", "-f", "FILE"}},
		},
		"kubectl delete then kubectl create": {
			recreate:           [][]string{{"delete", "-f", "FILE"}, {"create", "-f", "FILE"}},
			missingLastApplied: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := framework.New(t)
			k := f.Kubectl
			pred := framework.NewPredictor(t)
			file := framework.WriteFile(t, "app.yaml", recreated, 0o644)
			v2 := framework.WriteFile(t, "app-v2.yaml", strings.ReplaceAll(recreated, "release: v1", "release: v2"), 0o644)
			created := pred.Apply(t, k, file).MustSucceed(t)
			framework.WantLines(t, created.Stderr)
			for _, args := range tc.recreate {
				for i, a := range args {
					if a == "FILE" {
						args[i] = file
					}
				}
				k.Run(t, args...).MustSucceed(t)
			}

			// Not through the predictor: it does not match diff's
			// missing-last-applied with the apply's, which kubectl prints
			// after its own warning on the same object.
			applied := k.Run(t, "apply", "-f", v2).MustSucceed(t)
			framework.WantLines(t, applied.Stdout, "statefulset.apps/db configured", "service/db configured")
			if !tc.missingLastApplied {
				framework.WantLines(t, applied.Stderr)
				return
			}
			framework.WantMatch(t, applied.Stderr,
				kubectlMissing("statefulsets", "db"), missing("StatefulSet "+f.Namespace+"/db")+regexp.QuoteMeta("statefulsets.apps/db -n "+f.Namespace),
				kubectlMissing("services", "db"), missing("Service "+f.Namespace+"/db")+regexp.QuoteMeta("services/db -n "+f.Namespace))
		})
	}
}

// kubectlMissing is kubectl's own warning on applying to an object of
// resource without last-applied.
func kubectlMissing(resource, name string) string {
	return regexp.QuoteMeta("Warning: resource " + resource + "/" + name + " is missing the kubectl.kubernetes.io/last-applied-configuration annotation " +
		"which is required by kubectl apply. kubectl apply should only be used on resources created declaratively by either kubectl create " +
		"--save-config or kubectl apply. The missing annotation will be patched automatically.")
}

// missing is apply-hygiene's missing-last-applied warning on object, up to
// the explain command's target.
func missing(object string) string {
	return regexp.QuoteMeta("Warning: [missing-last-applied] " + object + ": the object has no kubectl.kubernetes.io/last-applied-configuration " +
		"annotation (objects made by kubectl create or replace without --save-config have none), so this apply cannot delete fields that your " +
		"manifest does not have; from now on apply records it. See the live fields your manifest does not have with: kubectl hygiene explain ")
}

// An allocated value a person set is no orphan when an update keeps it: a
// Service made as ExternalName, switched by kubectl patch to ClusterIP
// with its clusterIP (owned by kubectl-patch; clusterIPs mirrors it), then
// applied as ClusterIP without one. Removing clusterIP (or clusterIPs)
// brings it back from the other and from the stored Service, so the
// apply warns only that last-applied was missing.
func TestAllocatedValueAnUpdateKeepsIsNoOrphan(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	const external = `apiVersion: v1
kind: Service
metadata:
  name: ext
  labels: {release: v1}
spec:
  type: ExternalName
  externalName: example.com
  ports: [{port: 80}]
`
	v1 := framework.WriteFile(t, "v1.yaml", external, 0o644)
	k.Run(t, "create", "-f", v1).MustSucceed(t)
	// An address of the service range (10.96.0.0/16) that random
	// allocation is unlikely to have given another Service.
	ip := fmt.Sprintf("10.96.251.%d", crc32.ChecksumIEEE([]byte(f.Namespace))%250+1)
	patched := k.Run(t, "patch", "service/ext", "-p", `{"spec":{"type":"ClusterIP","externalName":null,"clusterIP":"`+ip+`"}}`).MustSucceed(t)
	framework.WantLines(t, patched.Stdout, "service/ext patched")

	v2 := strings.NewReplacer("release: v1", "release: v2", "type: ExternalName", "type: ClusterIP", "  externalName: example.com\n", "").Replace(external)
	applied := k.Run(t, "apply", "-f", framework.WriteFile(t, "v2.yaml", v2, 0o644)).MustSucceed(t)
	framework.WantLines(t, applied.Stdout, "service/ext configured")
	framework.WantMatch(t, applied.Stderr, kubectlMissing("services", "ext"),
		missing("Service "+f.Namespace+"/ext")+regexp.QuoteMeta("services/ext -n "+f.Namespace))
	if got := k.JSONPath(t, "service/ext", "{.spec.clusterIP} {.spec.clusterIPs}"); got != ip+` ["`+ip+`"]` {
		t.Errorf("clusterIP and clusterIPs = %s, want %s", got, ip)
	}
}
