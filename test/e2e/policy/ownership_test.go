package policy_test

import (
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// ownershipValues declare, in each of the three forms policy.ownership
// accepts, the fields of testdata/web-owned.yaml that something other than
// its manifest writes: example.com/team owned by the cluster (own form),
// example.com/stage by kubectl annotate's field manager (own form),
// spec.replicas by the cluster (Argo CD's jsonPointers), and a mesh's
// sidecar.istio.io/status annotation (Flux's driftIgnoreRules paths).
var ownershipValues = []string{
	"policy.ownership[0].kinds={apps/Deployment}",
	"policy.ownership[0].paths={metadata.annotations[example.com/team]}",
	"policy.ownership[0].owner=cluster",
	"policy.ownership[1].kinds={Deployment}",
	"policy.ownership[1].paths={metadata.annotations[example.com/stage]}",
	"policy.ownership[1].owner=kubectl-annotate",
	"policy.ownership[2].argoCD.group=apps",
	"policy.ownership[2].argoCD.kind=Deployment",
	"policy.ownership[2].argoCD.jsonPointers={/spec/replicas}",
	"policy.ownership[3].flux.paths={/metadata/annotations/sidecar.istio.io~1status}",
	"policy.ownership[3].flux.target.kind=Deployment",
}

// ownedDenial matches the [imperative-edit] denial of a write by
// apply-hygiene-admin, as kubectl prints it, up to the remedy (which
// names the hand-over command).
func ownedDenial(ns, writer, change string) string {
	return quote("Error from server (Forbidden): "+framework.DeniedPrefix+"[imperative-edit] Deployment "+ns+"/web: this write by apply-hygiene-admin"+writer+
		" changes fields that last-applied owns: "+change+"; the next kubectl apply puts the last-applied values back without a word. ") + ".*"
}

// Without ownership rules, kubectl annotate of an annotation the manifest
// owns and kubectl scale of its replicas are denied. With them, the same
// writes pass without a word, and so does the next kubectl apply that puts
// the manifest's values back; a mesh's annotation that the manifest lacks
// is no orphan, and kubectl hygiene explain and audit, reading the chart's
// configuration, say the same. Precision: a write under another field
// manager than the declared one, a field no rule declares (the image) and
// an annotation no rule declares (an orphan at the next apply) are
// reported as before.
func TestOwnership(t *testing.T) {
	t.Run("without ownership rules the writes are denied", func(t *testing.T) {
		f := framework.New(t)
		k := f.Kubectl
		k.Run(t, "apply", "-f", "testdata/web-owned.yaml").MustSucceed(t)
		annotate := k.Run(t, "annotate", "--overwrite", "deployment/web", "example.com/team=b").MustFail(t)
		framework.WantMatch(t, annotate.Stderr, ownedDenial(f.Namespace, " (field manager kubectl-annotate)", `metadata.annotations[example.com/team] (last-applied "a", now "b")`))
		scale := k.Run(t, "scale", "deployment/web", "--replicas=5").MustFail(t)
		framework.WantMatch(t, scale.Stderr, ownedDenial(f.Namespace, "", "spec.replicas (last-applied 3, now 5)"))
	})

	framework.Reconfigure(t, ownershipValues...)
	t.Run("with ownership rules the declared writes and the next apply are silent", func(t *testing.T) {
		f := framework.New(t)
		k := f.Kubectl
		k.Run(t, "apply", "-f", "testdata/web-owned.yaml").MustSucceed(t)

		for _, w := range []struct {
			args []string
			out  string
		}{
			{[]string{"annotate", "--overwrite", "deployment/web", "example.com/team=b"}, "deployment.apps/web annotated"},
			{[]string{"annotate", "--overwrite", "deployment/web", "example.com/stage=prod"}, "deployment.apps/web annotated"},
			{[]string{"scale", "deployment/web", "--replicas=5"}, "deployment.apps/web scaled"},
			{[]string{"annotate", "deployment/web", "sidecar.istio.io/status={}"}, "deployment.apps/web annotated"},
			{[]string{"annotate", "deployment/web", "example.com/note=x"}, "deployment.apps/web annotated"},
		} {
			res := k.Run(t, w.args...).MustSucceed(t)
			framework.WantLines(t, res.Stdout, w.out)
			framework.WantLines(t, res.Stderr)
		}

		// The declared manager is kubectl annotate's: kubectl patch is
		// another writer. The image is declared by no rule.
		patch := k.Run(t, "patch", "deployment/web", "-p", `{"metadata":{"annotations":{"example.com/stage":"qa"}}}`).MustFail(t)
		framework.WantMatch(t, patch.Stderr, ownedDenial(f.Namespace, " (field manager kubectl-patch)", `metadata.annotations[example.com/stage] (last-applied "dev", now "qa")`))
		image := k.Run(t, "set", "image", "deployment/web", "nginx=nginx:1.16.1").MustFail(t)
		framework.WantMatch(t, image.Stderr, "error: failed to patch image update to pod template: "+
			ownedDenial(f.Namespace, " (field manager kubectl-set)", `spec.template.spec.containers[name=nginx].image (last-applied "nginx:1.14.2", now "nginx:1.16.1")`)[len(quote("Error from server (Forbidden): ")):])

		// kubectl hygiene decides as the server does, with the chart's
		// configuration: explain marks neither drift nor orphan at the
		// declared fields, and audit reports only the undeclared
		// annotation.
		wantOwnedByTheCluster(t, f)

		// The apply puts team, stage and replicas back without a revert
		// warning; the mesh's annotation is no orphan, example.com/note is.
		apply := k.Run(t, "apply", "-f", "testdata/web-owned.yaml").MustSucceed(t)
		framework.WantLines(t, apply.Stdout, "deployment.apps/web configured")
		framework.WantMatch(t, apply.Stderr, quote("Warning: [orphaned-field] Deployment "+f.Namespace+`/web: metadata.annotations[example.com/note] ("x", set by kubectl-annotate at `)+
			`[0-9TZ:-]+`+quote(`) is in neither your manifest nor last-applied, so kubectl apply will never remove it. Remove it with: kubectl patch deployments.apps/web -n `+f.Namespace+
			` --type=json -p '[{"op":"test","path":"/metadata/annotations/example.com~1note","value":"x"},{"op":"remove","path":"/metadata/annotations/example.com~1note"}]'`))
		framework.WantLines(t, k.JSONPath(t, "deployment/web", `{.spec.replicas} {.metadata.annotations.example\.com/team} {.metadata.annotations.example\.com/stage} {.metadata.annotations.sidecar\.istio\.io/status}`),
			"3 a dev {}")
	})
}

// wantOwnedByTheCluster checks kubectl hygiene explain and audit of web
// after the declared writes of TestOwnership and kubectl annotate of
// example.com/note: only the note, which no rule declares, is an orphan
// and a finding; team, stage and replicas are no drift, the mesh's
// annotation no orphan.
func wantOwnedByTheCluster(t *testing.T, f *framework.Framework) {
	t.Helper()
	const using = "using policy configuration from configmap apply-hygiene/apply-hygiene-config and no user policies"
	explain := f.Hygiene(t, "explain", "deployment/web", "-n", f.Namespace)
	if explain.ExitCode != 0 {
		t.Errorf("kubectl hygiene explain exited %d", explain.ExitCode)
	}
	framework.WantLines(t, explain.Stderr, using)
	var fields []string
	for line := range strings.Lines(explain.Stdout) {
		line = strings.Join(strings.Fields(line), " ")
		if strings.HasPrefix(line, "metadata.annotations[example.com/") || strings.HasPrefix(line, "metadata.annotations[sidecar.") ||
			strings.HasPrefix(line, "spec.replicas ") || strings.Contains(line, ": [") {
			fields = append(fields, line)
		}
	}
	framework.WantMatch(t, strings.Join(fields, "\n"),
		quote(`metadata.annotations[example.com/note] "x" kubectl-annotate orphan`),
		quote(`metadata.annotations[example.com/stage] "prod" kubectl-annotate last-applied`),
		quote(`metadata.annotations[example.com/team] "b" kubectl-annotate last-applied`),
		quote(`metadata.annotations[sidecar.istio.io/status] "{}" kubectl-annotate -`),
		quote(`spec.replicas 5 kubectl last-applied`),
		quote("WARN: [orphaned-field] Deployment "+f.Namespace+`/web: metadata.annotations[example.com/note] ("x", set by kubectl-annotate at `)+".*")

	audit := f.Hygiene(t, "audit", "-n", f.Namespace)
	if audit.ExitCode != 0 {
		t.Errorf("kubectl hygiene audit exited %d", audit.ExitCode)
	}
	framework.WantLines(t, audit.Stderr, using)
	var table []string
	for line := range strings.Lines(audit.Stdout) {
		table = append(table, strings.Join(strings.Fields(line), " "))
	}
	framework.WantMatch(t, strings.Join(table, "\n"),
		"NAMESPACE OBJECT RULE ACTION PATH",
		quote(f.Namespace+" Deployment/web orphaned-field warn metadata.annotations[example.com/note]"),
		"",
		quote("[orphaned-field] Deployment "+f.Namespace+`/web: metadata.annotations[example.com/note] ("x", set by kubectl-annotate at `)+".*")
}
