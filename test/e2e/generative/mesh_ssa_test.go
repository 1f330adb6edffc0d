package generative_test

import (
	"strings"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// meshService is the Service the mesh test applies, client-side and
// server-side.
const meshService = `apiVersion: v1
kind: Service
metadata:
  name: nginx
  labels:
    app.kubernetes.io/name: nginx
spec:
  clusterIP: None
  ports:
  - name: web
    port: 80
  selector:
    app.kubernetes.io/name: nginx
`

// A mesh injector's stamp that kubectl edit --save-config recorded in
// last-applied is no orphan of a later server-side apply (soak seed
// 271126, sequence 222: [orphaned-field] of the stamp "set by
// kubectl-client-side-apply" on Argo CD's server-side apply). The API
// server tracks a write before mutating admission, so no entry owns the
// stamp; kubectl apply's entry keeps only the annotations map it once
// wrote, empty since kubectl edit took last-applied over. The apply
// changes nothing (the injector leaves it alone), kubectl's migration
// then drops last-applied, and the injector stamps that write again:
// removed, the stamp would come straight back. Nor is the annotation the
// edit added: kubectl-edit's entry owns it, and the migration removes it
// with last-applied.
func TestMeshStampInASavedRecordIsNoOrphanOfAServerSideApply(t *testing.T) {
	framework.ControlPlane(t)
	f := framework.New(t)
	startMesh(t, f)
	k := f.Kubectl
	k.RunWithInput(t, meshService, "apply", "-f", "-").MustSucceed(t)
	edit := k
	editor := framework.WriteFile(t, "editor.sh", editorScript(`.metadata.annotations["example.com/team"] = "a"`), 0o755)
	edit.Env = append(append([]string{}, k.Env...), "EDITOR="+editor, "KUBE_EDITOR="+editor)
	edit.Run(t, "edit", "service/nginx", "-o", "json", "--save-config").MustSucceed(t)
	recorded := k.JSONPath(t, "service/nginx", `{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`)
	framework.WantMatch(t, recorded, `.*"mesh.example.com/injected-revision":"[0-9]+".*`)

	res := k.RunWithInput(t, meshService, "apply", "--server-side", "--force-conflicts", "--field-manager=argocd-controller", "-f", "-").MustSucceed(t)
	framework.WantLines(t, res.Stdout, "service/nginx serverside-applied")
	framework.WantLines(t, res.Stderr)
	framework.WantMatch(t, k.JSONPath(t, "service/nginx", `{.metadata.annotations}`), `\{"mesh.example.com/injected-revision":"[0-9]+"\}`)
}

// meshServiceLabelled is meshService with one more label, for a kubectl
// replace --save-config that changes what apply recorded.
var meshServiceLabelled = strings.Replace(meshService, "    app.kubernetes.io/name: nginx\n", "    app.kubernetes.io/name: nginx\n    example.com/tier: web\n", 1)

// A mesh injector's stamp in an annotations map that kubectl-replace's
// entry holds only as an empty leaf is no person's orphan of a
// server-side apply (soak seed 271126, sequence 495: [orphaned-field] of
// the stamp "set by kubectl-replace" on Argo CD's server-side apply).
// kubectl replace --force --save-config re-created the object (its entry
// holds the annotations map itself, "."), a later kubectl replace
// --save-config changed it, Flux's clean-up patch removed last-applied,
// and kubectl-replace's entry kept f:annotations: {}:
// it owns the map, not the stamp the injector put in it, which no write
// owns (the API server tracks a write before mutating admission). The
// key kubectl annotate set is still reported.
func TestMeshStampInAMapAPersonHoldsEmptyIsNoOrphanOfAServerSideApply(t *testing.T) {
	framework.ControlPlane(t)
	f := framework.New(t)
	startMesh(t, f)
	k := f.Kubectl
	k.RunWithInput(t, meshService, "apply", "-f", "-").MustSucceed(t)
	k.RunWithInput(t, meshService, "replace", "--force", "--save-config", "-f", "-").MustSucceed(t)
	// A kubectl replace that changes the object a while after its
	// re-creation: its entry is a person's write again (merge's
	// isRecreation allows a second between the two clocks).
	time.Sleep(2500 * time.Millisecond)
	k.RunWithInput(t, meshServiceLabelled, "replace", "--save-config", "-f", "-").MustSucceed(t)
	k.Run(t, "patch", "service/nginx", "--type=json", "--field-manager=kustomize-controller", "-p",
		`[{"op":"remove","path":"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"}]`).MustSucceed(t)
	k.RunWithInput(t, meshServiceLabelled, "apply", "-f", "-").MustSucceed(t)
	k.Run(t, "annotate", "service/nginx", "example.com/team=a").MustSucceed(t)

	res := k.RunWithInput(t, meshServiceLabelled, "apply", "--server-side", "--force-conflicts", "--field-manager=argocd-controller", "-f", "-").MustSucceed(t)
	framework.WantLines(t, res.Stdout, "service/nginx serverside-applied")
	framework.WantMatch(t, res.Stderr,
		`Warning: \[orphaned-field\] Service [^/]+/nginx: metadata\.annotations\[example\.com/team\] \("a", set by kubectl-annotate at [^)]+\) is in neither your manifest nor last-applied, so kubectl apply will never remove it\. Remove it with: .*`)
}
