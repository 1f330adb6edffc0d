package webhook

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apply-hygiene/apply-hygiene/policy"
)

func TestFitWarnings(t *testing.T) {
	orphan := func(i int) string {
		return fmt.Sprintf("[orphaned-field] Deployment default/web: metadata.labels[team-%d] (\"a\") is in neither your manifest nor last-applied, so kubectl apply will never remove it. Remove it with: %s", i, strings.Repeat("x", 300))
	}
	drift := "[apply-reverts-drift] Deployment default/web: this apply sets spec.replicas back to 3, discarding 5 set by alice since the last apply."
	target := "deployments.apps/web -n default"
	tests := map[string]struct {
		warnings []string
		budget   int
		want     []string
	}{
		"within the budget: unchanged": {
			warnings: []string{orphan(1), drift}, budget: validatingWarningRunes,
			want: []string{orphan(1), drift},
		},
		"past it: the first whole, the rest counted by rule": {
			warnings: []string{orphan(1), orphan(2), orphan(3), orphan(4), orphan(5), orphan(6), orphan(7), orphan(8), drift},
			budget:   validatingWarningRunes,
			want: []string{orphan(1), orphan(2), orphan(3), orphan(4),
				"[apply-hygiene] 5 more warnings (4 orphaned-field, 1 apply-reverts-drift) left out: the API server passes on at most 4 KiB of warnings for a write. See every finding with: kubectl hygiene explain deployments.apps/web -n default"},
		},
		"not even one fits: only the count": {
			warnings: []string{orphan(1), orphan(2)}, budget: 300,
			want: []string{"[apply-hygiene] 2 more warnings (2 orphaned-field) left out: the API server passes on at most 4 KiB of warnings for a write. See every finding with: kubectl hygiene explain deployments.apps/web -n default"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := FitWarnings(tc.warnings, tc.budget, target)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("FitWarnings (-want +got):\n%s", diff)
			}
			if len(got) > 1 || len(tc.warnings) == len(got) {
				total := 0
				for _, w := range got {
					total += utf8.RuneCountInString(w)
				}
				if total > tc.budget {
					t.Errorf("%d runes, over the budget %d", total, tc.budget)
				}
			}
		})
	}
}

// The two webhooks' shares leave a quarter of the API server's limit to
// the other warnings of a write (a Pod Security warning takes 300 to 600).
func TestWarningSharesFitTheAPIServersLimit(t *testing.T) {
	if got := mutatingWarningRunes + validatingWarningRunes + othersWarningRunes; got != 4*1024 {
		t.Errorf("shares add up to %d runes, want the API server's 4096", got)
	}
	if othersWarningRunes < 4096/5 {
		t.Errorf("%d runes left to other warnings, want at least a fifth of 4096", othersWarningRunes)
	}
}

// The object of the left-out warning's command is written as the
// policies' messages write it (lib.target): RESOURCE.GROUP/NAME from the
// request's resource (a Scale's warnings are about its workload), each
// word quoted for the shell when it has more than letters, digits and
// . _ / : -, so that a pasted command never runs part of a name.
func TestRequestTarget(t *testing.T) {
	tests := map[string]struct {
		req  admissionv1.AdmissionRequest
		want string
	}{
		"a Deployment: its resource and group": {
			req:  request("apps", "deployments", "", "Deployment", "shop", "web"),
			want: "deployments.apps/web -n shop",
		},
		"a kind of the core group has no group": {
			req:  request("", "configmaps", "", "ConfigMap", "shop", "settings"),
			want: "configmaps/settings -n shop",
		},
		"a custom resource named like a built-in kind is told apart by its group": {
			req:  request("example.com", "deployments", "", "Deployment", "shop", "web"),
			want: "deployments.example.com/web -n shop",
		},
		"a Scale is about its workload": {
			req:  request("apps", "statefulsets", "scale", "Scale", "shop", "db"),
			want: "statefulsets.apps/db -n shop",
		},
		"a cluster-scoped object has no namespace": {
			req:  request("rbac.authorization.k8s.io", "clusterroles", "", "ClusterRole", "", "reader"),
			want: "clusterroles.rbac.authorization.k8s.io/reader",
		},
		"a name with a colon, as RBAC's, needs no quotes (cmd.exe keeps them)": {
			req:  request("rbac.authorization.k8s.io", "clusterroles", "", "ClusterRole", "", "system:aggregate-to-edit"),
			want: "clusterroles.rbac.authorization.k8s.io/system:aggregate-to-edit",
		},
		"a name the shell would run is quoted": {
			req:  request("rbac.authorization.k8s.io", "clusterroles", "", "ClusterRole", "", "reader;touch pwned;x"),
			want: "'clusterroles.rbac.authorization.k8s.io/reader;touch pwned;x'",
		},
		"a quote in a name is closed, escaped and reopened": {
			req:  request("rbac.authorization.k8s.io", "roles", "", "Role", "team-a", "it's $(id)"),
			want: `'roles.rbac.authorization.k8s.io/it'\''s $(id)' -n team-a`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := requestTarget(&admission.Request{AdmissionRequest: tc.req})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("requestTarget (-want +got):\n%s", diff)
			}
		})
	}
}

func request(group, resource, subresource, kind, namespace, name string) admissionv1.AdmissionRequest {
	return admissionv1.AdmissionRequest{
		Resource:    metav1.GroupVersionResource{Group: group, Version: "v1", Resource: resource},
		SubResource: subresource,
		Kind:        metav1.GroupVersionKind{Group: group, Version: "v1", Kind: kind},
		Namespace:   namespace,
		Name:        name,
	}
}

// A warning over the length cap is cut before the command it shows, which
// stays whole (found by review: a hand-over command cut in the middle is
// another command); the cut never splits a character. A command too long
// to fit is left out, and the warning names where to see it whole.
func TestCutWarning(t *testing.T) {
	command := "kubectl hygiene handover deployments.apps/web -n shop spec.f1 spec.f2"
	long := "[imperative-edit] Deployment shop/web: this write by alice changes fields that last-applied owns: spec.f1 (last-applied \"" +
		strings.Repeat("é", 100) + "\", now 5); the next kubectl apply puts the last-applied values back without a word. Put the change in your manifest and run kubectl apply, " +
		"or hand a field over to its new writer by deleting it from last-applied first with: " + command
	longCommand := "kubectl hygiene handover deployments.apps/web -n shop" + strings.Repeat(" metadata.labels.a", 40)
	tests := map[string]struct {
		decision policy.Decision
		max      int
		want     string
	}{
		"a message within the cap is whole": {
			decision: policy.Decision{Message: long, Command: command}, max: 1024,
			want: long,
		},
		"a longer one is cut before its command": {
			decision: policy.Decision{Message: long, Command: command}, max: 215,
			want: "[imperative-edit] Deployment shop/web: this write by alice changes fields that last-applied owns: spec.f1 (last-applied \"ééééééé… with: " + command,
		},
		"a message without a command is cut at its end": {
			decision: policy.Decision{Message: long}, max: 130,
			want: "[imperative-edit] Deployment shop/web: this write by alice changes fields that last-applied owns: spec.f1 (last-applied \"ééé…",
		},
		"a command longer than the cap is left out": {
			decision: policy.Decision{Message: "[imperative-edit] Deployment shop/web: 40 fields changed; hand them over first with: " + longCommand, Command: longCommand}, max: 200,
			want: "[imperative-edit] Deployment shop/web: 40 fields changed; hand them over first… (the command is too long for a warning: kubectl hygiene explain deployments.apps/web -n shop prints it)",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := cutWarning(tc.decision, tc.max, "deployments.apps/web -n shop")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("cutWarning (-want +got):\n%s", diff)
			}
			if len(got) > tc.max {
				t.Errorf("%d bytes, over the cap %d", len(got), tc.max)
			}
			if !utf8.ValidString(got) {
				t.Errorf("cut inside a character: %q", got)
			}
		})
	}
}
