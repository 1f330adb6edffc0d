package kinds_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// TestEveryKind plays one scenario per built-in kind (testdata/<kind>):
// apply v1; an imperative edit of an owned field is denied with the exact
// kubectl line; a field added outside the manifest passes without a word,
// and the changed apply of v2 warns that it is orphaned, with a command
// that removes it; the same edit by a member of the break-glass group
// passes with a warning, kubectl hygiene audit and explain report the
// drift, and the changed apply of v3 warns that it reverts it. Every apply
// is predicted exactly by kubectl hygiene diff, and nothing else is
// printed.
func TestEveryKind(t *testing.T) {
	kinds := map[string]string{
		"v1 Service":   "service",
		"v1 ConfigMap": "configmap",
		"v1 Secret, whose values are never printed": "secret",
		"v1 ServiceAccount":                         "serviceaccount",
		"v1 Namespace (cluster-scoped)":             "namespace",
		"networking.k8s.io/v1 Ingress":              "ingress",
		"networking.k8s.io/v1 NetworkPolicy":        "networkpolicy",
		"batch/v1 CronJob":                          "cronjob",
		"batch/v1 Job":                              "job",
		"autoscaling/v2 HorizontalPodAutoscaler":    "hpa",
		"policy/v1 PodDisruptionBudget":             "pdb",
		"rbac/v1 Role":                              "role",
		"rbac/v1 RoleBinding":                       "rolebinding",
		"rbac/v1 ClusterRole, edited with kubectl edit (cluster-scoped)": "clusterrole",
		"rbac/v1 ClusterRoleBinding (cluster-scoped)":                    "clusterrolebinding",
	}
	grantBreakGlass(t)
	plugins := filepath.Dir(framework.HygieneBinary(t))
	pred := framework.NewPredictor(t)
	t.Cleanup(func() {
		// Three applies per kind: v2 warns about the orphan, v3 about the
		// revert, v1 creates silently.
		want := fmt.Sprintf("kubectl hygiene diff predicted %d applies exactly (%d messages of apply-hygiene, %d applies without any)", 3*len(kinds), 2*len(kinds), len(kinds))
		if got := pred.Summary(); got != want {
			t.Errorf("%s, want %s", got, want)
		}
	})
	for name, dir := range kinds {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := &scenario{dir: filepath.Join("testdata", dir), c: loadCase(t, filepath.Join("testdata", dir)), pred: pred}
			s.f = framework.New(t)
			s.k = s.f.Kubectl
			s.k.Env = []string{"PATH=" + plugins + ":" + os.Getenv("PATH")}
			s.bob = s.f.KubectlAs(t, "oncall-bob", breakGlassGroup)
			s.run(t)
		})
	}
}

// grantBreakGlass lets the break-glass group change everything, cluster-
// scoped kinds and RBAC included; the binding is the package's, made by
// its first test.
func grantBreakGlass(t *testing.T) {
	t.Helper()
	f := framework.New(t)
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "kinds-e2e-break-glass"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: breakGlassGroup}},
	}
	if _, err := f.Client.RbacV1().ClusterRoleBindings().Create(t.Context(), crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("binding cluster-admin to %s: %v", breakGlassGroup, err)
	}
}

// scenario is one kind's run.
type scenario struct {
	dir  string
	c    kindCase
	pred *framework.Predictor
	f    *framework.Framework
	// k is the admin's kubectl (with kubectl-hygiene on PATH), bob a
	// member of the break-glass group.
	k, bob framework.Kubectl
	// outputs collects everything kubectl printed, for the Secret check.
	outputs []string
}

func (s *scenario) run(t *testing.T) {
	ns := s.f.Namespace
	if s.c.ClusterScoped {
		t.Cleanup(func() { s.k.Run(t, "delete", s.c.Object, "--wait=false") })
	}
	created := s.apply(t, "v1.yaml")
	framework.WantLines(t, created.Stdout, s.c.Printed+" created")
	framework.WantLines(t, created.Stderr)
	s.wantField(t, s.c.Field.Applied)

	denied := s.kubectl(t, s.k, s.c.Edit).MustFail(t)
	framework.WantMatch(t, denied.Stderr, expand(ns, s.c.Denied)...)
	s.wantField(t, s.c.Field.Applied)
	s.handOverDryRun(t, denied.Stderr)

	added := s.kubectl(t, s.k, s.c.Addition).MustSucceed(t)
	framework.WantLines(t, added.Stdout, s.c.AdditionStdout...)
	framework.WantLines(t, added.Stderr)

	orphan := s.apply(t, "v2.yaml").MustSucceed(t)
	framework.WantLines(t, orphan.Stdout, s.c.Printed+" configured")
	m := framework.WantMatch(t, orphan.Stderr, expand(ns, s.c.Orphan)...)
	s.remove(t, m)

	edited := s.kubectl(t, s.bob, s.c.Edit).MustSucceed(t)
	framework.WantLines(t, edited.Stdout, s.c.EditedStdout...)
	framework.WantMatch(t, edited.Stderr, expand(ns, s.c.Warned)...)
	s.wantField(t, s.c.Field.Edited)

	s.hygiene(t)
	if len(s.c.Secrets) > 0 {
		// What diff shows of the apply to come, in every format, goes
		// through the Secret check too.
		for _, format := range []string{"", "json", "yaml"} {
			diff := s.k.Run(t, "hygiene", "diff", "-f", filepath.Join(s.dir, "v3.yaml"), "--output="+format).MustSucceed(t)
			s.outputs = append(s.outputs, diff.Stdout, diff.Stderr)
		}
	}

	revert := s.apply(t, "v3.yaml").MustSucceed(t)
	framework.WantLines(t, revert.Stdout, s.c.Printed+" configured")
	framework.WantMatch(t, revert.Stderr, expand(ns, s.c.Revert)...)
	s.wantField(t, s.c.Field.Applied)
	s.noSecrets(t)
}

// apply applies a manifest of the case through the predictor.
func (s *scenario) apply(t *testing.T, file string) framework.Result {
	t.Helper()
	res := s.pred.Apply(t, s.k, filepath.Join(s.dir, file))
	s.outputs = append(s.outputs, res.Stdout, res.Stderr)
	return res
}

// kubectl runs a command of the case as k.
func (s *scenario) kubectl(t *testing.T, k framework.Kubectl, c command) framework.Result {
	t.Helper()
	if c.Editor != "" {
		editor := framework.WriteFile(t, "editor.sh", "#!/bin/sh\n"+c.Editor+" \"$1\"\n", 0o755)
		k.Env = append(append([]string{}, k.Env...), "EDITOR="+editor, "KUBE_EDITOR="+editor)
	}
	res := k.Run(t, c.Kubectl...)
	s.outputs = append(s.outputs, res.Stdout, res.Stderr)
	return res
}

// wantField checks the value of the owned field that the edit changes.
func (s *scenario) wantField(t *testing.T, want string) {
	t.Helper()
	if got := s.k.JSONPath(t, s.c.Object, s.c.Field.JSONPath); got != want {
		t.Errorf("%s of %s = %q, want %q", s.c.Field.JSONPath, s.c.Object, got, want)
	}
}

// removeWith is how an orphan warning ends: the command that removes the
// field.
var removeWith = regexp.MustCompile(`Remove it with: (kubectl patch .*)$`)

// remove runs the command of the orphan warning as a user would, with the
// built kubectl first on PATH, and checks that the orphan is gone.
func (s *scenario) remove(t *testing.T, m [][]string) {
	t.Helper()
	if len(m) != 1 || removeWith.FindStringSubmatch(m[0][0]) == nil {
		t.Fatalf("the orphan warning has no removal command: %q", m)
	}
	command := removeWith.FindStringSubmatch(m[0][0])[1]
	out := s.k.RunPrinted(t, command)
	s.outputs = append(s.outputs, out)
	framework.WantLines(t, strings.TrimSpace(out), s.c.Printed+" patched")
	if got := s.k.JSONPath(t, s.c.Object, s.c.Added); got != "" {
		t.Errorf("%s of %s after %s = %q, want it removed", s.c.Added, s.c.Object, command, got)
	}
}

// handoverWith is how an imperative-edit denial ends: the hand-over
// command, after the path it names.
var handoverWith = regexp.MustCompile(`owns: (\S+) \(last-applied .*first with: (kubectl hygiene handover .*)$`)

// handOverDryRun runs the hand-over command that the denial ends with, as
// printed and with --dry-run: kubectl finds the plugin, which takes the
// kind as the message writes it and the path in the messages' syntax, and
// stores nothing.
func (s *scenario) handOverDryRun(t *testing.T, stderr string) {
	t.Helper()
	var m []string
	for line := range strings.SplitSeq(stderr, "\n") {
		if m == nil {
			m = handoverWith.FindStringSubmatch(line)
		}
	}
	if m == nil {
		t.Fatalf("the denial has no hand-over command: %q", stderr)
	}
	out := s.k.RunPrinted(t, m[2]+" --dry-run")
	s.outputs = append(s.outputs, out)
	outLines := strings.Split(strings.TrimSpace(out), "\n")
	if want := ": last-applied no longer has " + m[1] + " (server dry run: nothing stored)"; !strings.HasSuffix(outLines[0], want) {
		t.Errorf("%s --dry-run printed %q, want a first line ending %q", m[2], out, want)
	}
	s.wantField(t, s.c.Field.Applied)
}
