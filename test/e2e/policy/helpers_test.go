package policy_test

import (
	"regexp"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

const seeds = "../seeds/testdata/"

func quote(s string) string { return regexp.QuoteMeta(s) }

// breakGlass returns kubectl as a member of the break-glass group with the
// edit role in the test's namespace.
func breakGlass(t *testing.T, f *framework.Framework, user string) framework.Kubectl {
	t.Helper()
	f.Grant(t, "edit", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: breakGlassGroup})
	return f.KubectlAs(t, user, breakGlassGroup)
}

// labelNamespace sets labels on the test's namespace; call it before the
// first reviewed write there, as the server caches namespace labels.
func labelNamespace(t *testing.T, f *framework.Framework, labels ...string) {
	t.Helper()
	f.Kubectl.Run(t, append([]string{"label", "namespace", f.Namespace, "--overwrite"}, labels...)...).MustSucceed(t)
}
