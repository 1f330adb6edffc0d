package policy_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// noLabelPolicy denies kubectl label in one namespace.
func noLabelPolicy(ns string) string {
	return `package applyhygiene.rules.e2e_no_label

import data.applyhygiene.lib

decisions contains lib.decision_or("no-label", "deny", message, []) if {
	input.request.fieldManager == "kubectl-label"
	input.namespace.name == "` + ns + `"
}

message := sprintf("[no-label] %s: no kubectl label here", [lib.describe])
`
}

// A user policy in a ConfigMap labelled apply-hygiene.io/policy=rego in the
// server's namespace is loaded; a syntax error in it is reported on the
// ConfigMap with file and line, and the policy loaded before keeps deciding.
func TestConfigMapPolicyErrorIsReportedAndLastGoodPolicyDecides(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/web-v1.yaml").MustSucceed(t)
	cms := f.Client.CoreV1().ConfigMaps(devenv.Namespace)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-no-label", Labels: map[string]string{"apply-hygiene.io/policy": "rego"}},
		Data:       map[string]string{"policy.rego": noLabelPolicy(f.Namespace)},
	}
	if _, err := cms.Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the policy ConfigMap: %v", err)
	}
	t.Cleanup(func() {
		if err := cms.Delete(context.Background(), cm.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting the policy ConfigMap: %v", err)
		}
	})
	denial := ".*" + quote(framework.DeniedPrefix+"[no-label] Deployment "+f.Namespace+"/web: no kubectl label here")
	framework.Eventually(t, 30*time.Second, "the ConfigMap policy to load", func(context.Context) (bool, error) {
		res := k.Run(t, "label", "deployment/web", "team=a", "--dry-run=server")
		return regexp.MustCompile(denial).MatchString(res.Stderr), nil
	})
	framework.WantMatch(t, k.Run(t, "label", "deployment/web", "team=a").MustFail(t).Stderr, denial)

	cur, err := cms.Get(t.Context(), cm.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Data["policy.rego"] = "package applyhygiene.rules.e2e_no_label\n\nmessage := {\n"
	if _, err := cms.Update(t.Context(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("breaking the policy ConfigMap: %v", err)
	}
	var annotation string
	framework.Eventually(t, 30*time.Second, "the error annotation", func(ctx context.Context) (bool, error) {
		got, err := cms.Get(ctx, cm.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		annotation = got.Annotations["apply-hygiene.io/policy-error"]
		return annotation != "", nil
	})
	if want := "configmap/e2e-no-label/policy.rego:4: rego_parse_error: "; !regexp.MustCompile("^" + quote(want)).MatchString(annotation) {
		t.Errorf("annotation = %q, want it to start with %q", annotation, want)
	}
	framework.WantMatch(t, k.Run(t, "label", "deployment/web", "team=a").MustFail(t).Stderr, denial)
}
