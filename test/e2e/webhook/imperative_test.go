package webhook_test

import (
	"fmt"
	"regexp"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// imperativeDenial is the [imperative-edit] message for one changed field
// of deployment/web; manager is "" when the request named none (kubectl
// scale sends none).
func imperativeDenial(ns, user, manager, field, arg string) string {
	if manager != "" {
		user += " (field manager " + manager + ")"
	}
	return fmt.Sprintf("[imperative-edit] Deployment %s/web: this write by %s changes fields that last-applied owns: %s; "+
		"the next kubectl apply puts the last-applied values back without a word. Put the change in your manifest and run kubectl apply, "+
		"or hand a field over to its new writer by deleting it from last-applied first with: kubectl hygiene handover deployments.apps/web -n %s %s",
		ns, user, field, ns, arg)
}

const imageField = `spec.template.spec.containers[name=nginx].image (last-applied "nginx:1.14.2", now "nginx:1.99")`

// imageArg is imageField's path as the hand-over command names it.
const imageArg = `'spec.template.spec.containers[name=nginx].image'`

// kubectl set image, edit, patch and scale on fields that last-applied owns
// are denied, and nothing is written.
func TestImperativeEditOfOwnedFieldIsDenied(t *testing.T) {
	// editor replaces the image everywhere, as a search-and-replace does:
	// also in the last-applied annotation that kubectl edit shows.
	editor := framework.WriteFile(t, "editor.sh", "#!/bin/sh\nsed -i 's/nginx:1.14.2/nginx:1.99/' \"$1\"\n", 0o755)
	lineEditor := framework.WriteFile(t, "line-editor.sh", "#!/bin/sh\nsed -i 's/^\\( *image: \\)nginx:1.14.2$/\\1nginx:1.99/' \"$1\"\n", 0o755)
	tests := map[string]struct {
		args []string
		env  []string
		// stderr returns the expected stderr patterns (anchored regexps).
		stderr func(ns, user string) []string
	}{
		"kubectl set image": {
			args: []string{"set", "image", "deployment/web", "nginx=nginx:1.99"},
			stderr: func(ns, user string) []string {
				return []string{regexp.QuoteMeta("error: failed to patch image update to pod template: " + framework.DeniedPrefix + imperativeDenial(ns, user, "kubectl-set", imageField, imageArg))}
			},
		},
		// The field manager's name is no pass: the write moves a field
		// last-applied owns away from it and leaves last-applied as it
		// was, which no apply does (issue 25).
		"kubectl set image under kubectl apply's field manager": {
			args: []string{"set", "image", "deployment/web", "nginx=nginx:1.99", "--field-manager=kubectl-client-side-apply"},
			stderr: func(ns, user string) []string {
				return []string{regexp.QuoteMeta("error: failed to patch image update to pod template: " + framework.DeniedPrefix + imperativeDenial(ns, user, "kubectl-client-side-apply", imageField, imageArg))}
			},
		},
		"kubectl edit": {
			args: []string{"edit", "deployment/web"},
			env:  []string{"EDITOR=" + editor, "KUBE_EDITOR=" + editor},
			stderr: func(ns, user string) []string {
				return []string{
					regexp.QuoteMeta(`error: deployments.apps "web" could not be patched: ` + framework.DeniedPrefix + imperativeDenial(ns, user, "kubectl-edit", imageField, imageArg)),
					"You can run `kubectl replace -f /tmp/kubectl-edit-[0-9]+.yaml` to try this update again.",
				}
			},
		},
		// The editor changes only the container's image line, not the
		// last-applied JSON that kubectl edit shows too.
		"kubectl edit of the field alone": {
			args: []string{"edit", "deployment/web"},
			env:  []string{"EDITOR=" + lineEditor, "KUBE_EDITOR=" + lineEditor},
			stderr: func(ns, user string) []string {
				return []string{
					regexp.QuoteMeta(`error: deployments.apps "web" could not be patched: ` + framework.DeniedPrefix + imperativeDenial(ns, user, "kubectl-edit", imageField, imageArg)),
					"You can run `kubectl replace -f /tmp/kubectl-edit-[0-9]+.yaml` to try this update again.",
				}
			},
		},
		"kubectl patch": {
			args: []string{"patch", "deployment/web", "-p", `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.99"}]}}}}`},
			stderr: func(ns, user string) []string {
				return []string{regexp.QuoteMeta("Error from server (Forbidden): " + framework.DeniedPrefix + imperativeDenial(ns, user, "kubectl-patch", imageField, imageArg))}
			},
		},
		"kubectl patch --dry-run=server": {
			args: []string{"patch", "deployment/web", "--dry-run=server", "-p", `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.99"}]}}}}`},
			stderr: func(ns, user string) []string {
				return []string{regexp.QuoteMeta("Error from server (Forbidden): " + framework.DeniedPrefix + imperativeDenial(ns, user, "kubectl-patch", imageField, imageArg))}
			},
		},
		"kubectl scale": {
			args: []string{"scale", "deployment/web", "--replicas=5"},
			stderr: func(ns, user string) []string {
				return []string{regexp.QuoteMeta("Error from server (Forbidden): " + framework.DeniedPrefix +
					imperativeDenial(ns, user, "", "spec.replicas (last-applied 3, now 5)", "spec.replicas"))}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := framework.New(t)
			k := f.Kubectl
			k.Run(t, "apply", "-f", "testdata/deployment-v1.yaml").MustSucceed(t)
			before := userFields(t, k, "deployment/web")

			k.Env = tc.env
			res := k.Run(t, tc.args...).MustFail(t)
			framework.WantMatch(t, res.Stderr, tc.stderr(f.Namespace, "apply-hygiene-admin")...)
			if after := userFields(t, k, "deployment/web"); after != before {
				t.Errorf("generation, labels, spec %s → %s: the denied write changed the object", before, after)
			}
		})
	}
}

// Writes to fields that last-applied does not own pass without a word:
// kubectl scale when the manifest has no replicas (seed 002), a new label.
func TestImperativeEditOfUnownedFieldPasses(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	framework.ApplyPredicted(t, k, seeds+"seed002-simple-deployment.yaml").MustSucceed(t)

	scale := k.Run(t, "scale", "deployment/nginx-deployment", "--replicas=2").MustSucceed(t)
	framework.WantLines(t, scale.Stdout, "deployment.apps/nginx-deployment scaled")
	framework.WantLines(t, scale.Stderr)
	label := k.Run(t, "label", "deployment/nginx-deployment", "team=payments").MustSucceed(t)
	framework.WantLines(t, label.Stdout, "deployment.apps/nginx-deployment labeled")
	framework.WantLines(t, label.Stderr)
	framework.WantLines(t, k.JSONPath(t, "deployment/nginx-deployment", "{.spec.replicas} {.metadata.labels.team}"), "2 payments")
}

// A member of the break-glass group and a service account get the
// imperative-edit finding as a warning, and the write goes through.
func TestImperativeEditByBreakGlassOrServiceAccountWarns(t *testing.T) {
	tests := map[string]struct {
		kubectl func(t *testing.T, f *framework.Framework) (framework.Kubectl, string)
	}{
		"a member of the break-glass group": {kubectl: func(t *testing.T, f *framework.Framework) (framework.Kubectl, string) {
			f.Grant(t, "edit", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: breakGlassGroup})
			return f.KubectlAs(t, "oncall-bob", breakGlassGroup), "oncall-bob"
		}},
		"a service account": {kubectl: func(t *testing.T, f *framework.Framework) (framework.Kubectl, string) {
			return f.KubectlAsServiceAccount(t, "ci-bot"), "system:serviceaccount:" + f.Namespace + ":ci-bot"
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := framework.New(t)
			f.Kubectl.Run(t, "apply", "-f", "testdata/deployment-v1.yaml").MustSucceed(t)
			k, user := tc.kubectl(t, f)
			res := k.Run(t, "set", "image", "deployment/web", "nginx=nginx:1.99").MustSucceed(t)
			framework.WantLines(t, res.Stdout, "deployment.apps/web image updated")
			framework.WantLines(t, res.Stderr, "Warning: "+imperativeDenial(f.Namespace, user, "kubectl-set", imageField, imageArg))
			framework.WantLines(t, f.Kubectl.JSONPath(t, "deployment/web", "{.spec.template.spec.containers[0].image}"), "nginx:1.99")
		})
	}
}
