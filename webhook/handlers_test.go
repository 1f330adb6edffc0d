package webhook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apply-hygiene/apply-hygiene/internal/review"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// The reviews are real: hack/capture-reviews recorded what kube-apiserver
// 1.37 sent for each kubectl command (see testdata/reviews/README.md).
func TestHandlersOnCapturedReviews(t *testing.T) {
	tests := map[string]struct {
		review         string
		classification policy.Classification // "" when the request is not reviewed
		denied         string                // first line of the denial, "" when allowed
		warnings       []string              // rule of each validating warning
		repairs        []string              // rule of each mutating warning
	}{
		"a create is not reviewed":                        {review: "deployment-apply-create"},
		"an apply of a changed manifest passes":           {review: "deployment-apply", classification: policy.ClientSideApply},
		"an apply over kubectl set image warns of revert": {review: "deployment-apply-reverts-drift", classification: policy.ClientSideApply, warnings: []string{"apply-reverts-drift"}},
		"an apply after a restart warns of the orphan":    {review: "deployment-apply-after-restart", classification: policy.ClientSideApply, warnings: []string{"orphaned-field"}},
		"a server-side apply passes":                      {review: "deployment-apply-server-side", classification: policy.ServerSideApply},
		"a server-side apply after a restart warns of the orphan": {review: "deployment-apply-server-side-after-restart",
			classification: policy.ServerSideApply, warnings: []string{"orphaned-field"}},
		"kubectl edit of an owned field is denied":       {review: "deployment-edit", classification: policy.Imperative, denied: "[imperative-edit] "},
		"kubectl patch of an owned field is denied":      {review: "deployment-patch", classification: policy.Imperative, denied: "[imperative-edit] "},
		"kubectl set image is denied":                    {review: "deployment-set-image", classification: policy.Imperative, denied: "[imperative-edit] "},
		"kubectl set env on an owned variable is denied": {review: "deployment-set-env", classification: policy.Imperative, denied: "[imperative-edit] "},
		"kubectl label of a new label passes":            {review: "deployment-label", classification: policy.Imperative},
		"kubectl annotate of a new annotation passes":    {review: "deployment-annotate", classification: policy.Imperative},
		"kubectl scale of owned replicas is denied":      {review: "deployment-scale", classification: policy.Scale, denied: "[imperative-edit] "},
		"a StatefulSet's kubectl scale is denied":        {review: "statefulset-scale", classification: policy.Scale, denied: "[imperative-edit] "},
		"the HPA's scale is a controller's":              {review: "deployment-scale-by-controller"},
		"a service account's edit only warns":            {review: "deployment-edit-by-service-account", classification: policy.Imperative, warnings: []string{"imperative-edit"}},
		"rollout restart passes":                         {review: "deployment-rollout-restart", classification: policy.RolloutRestart},
		"replace --save-config passes":                   {review: "deployment-replace-save-config", classification: policy.SaveConfig},
		"apply set-last-applied passes":                  {review: "deployment-set-last-applied", classification: policy.SaveConfig},
		"apply edit-last-applied passes":                 {review: "deployment-edit-last-applied", classification: policy.SaveConfig},
		"a Deployment's rollout undo is repaired":        {review: "deployment-rollout-undo", classification: policy.RolloutUndo, repairs: []string{"stale-last-applied"}},
		"a StatefulSet's rollout undo is repaired":       {review: "statefulset-rollout-undo", classification: policy.RolloutUndo, repairs: []string{"stale-last-applied"}},
		"a DaemonSet's rollout undo is repaired":         {review: "daemonset-rollout-undo", classification: policy.RolloutUndo, repairs: []string{"stale-last-applied"}},
		// The undo (webhook absent) set the image back; v3 replaces it again.
		"seed 004's apply after the undo warns": {review: "statefulset-apply-after-undo", classification: policy.ClientSideApply,
			warnings: []string{"apply-reverts-drift", "orphaned-field"}},
	}
	engine := newEngine(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := loadReview(t, tc.review)
			r := NewReviewer(engine, loadCluster(t, filepath.Join("testdata", "reviews", tc.review+".cluster.json")))
			rv, err := r.core.Review(t.Context(), &req.AdmissionRequest, review.Validate)
			if err != nil {
				t.Fatalf("review: %v", err)
			}
			var got policy.Classification
			if rv != nil {
				got = rv.Input.Classification
			}
			if got != tc.classification {
				t.Errorf("classification = %q, want %q", got, tc.classification)
			}
			validating := r.Validating().Handle(t.Context(), req)
			gotDenied := ""
			if !validating.Allowed {
				gotDenied = strings.SplitN(validating.Result.Message, "\n", 2)[0]
			}
			if tc.denied == "" && gotDenied != "" || !strings.HasPrefix(gotDenied, tc.denied) {
				t.Errorf("validating denial = %q, want it to start with %q", gotDenied, tc.denied)
			}
			if diff := cmp.Diff(tc.warnings, rulesOf(validating.Warnings)); diff != "" {
				t.Errorf("validating warnings mismatch (-want +got):\n%s\nwarnings: %q", diff, validating.Warnings)
			}
			mutating := r.Mutating().Handle(t.Context(), req)
			if diff := cmp.Diff(tc.repairs, rulesOf(mutating.Warnings)); diff != "" {
				t.Errorf("mutating warnings mismatch (-want +got):\n%s\nwarnings: %q", diff, mutating.Warnings)
			}
			if len(tc.repairs) == 0 && len(mutating.Patches) > 0 {
				t.Errorf("mutating patches = %v, want none", mutating.Patches)
			}
		})
	}
}

var rulePrefix = regexp.MustCompile(`^\[([a-z-]+)\] `)

// rulesOf returns the rule ID that starts each message.
func rulesOf(messages []string) []string {
	var rules []string
	for _, m := range messages {
		if sub := rulePrefix.FindStringSubmatch(m); sub != nil {
			rules = append(rules, sub[1])
		} else {
			rules = append(rules, "no rule: "+m)
		}
	}
	return rules
}

func loadReview(t *testing.T, name string) admission.Request {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "reviews", name+".json"))
	if err != nil {
		t.Fatalf("reading review: %v", err)
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(raw, &review); err != nil {
		t.Fatalf("decoding review %s: %v", name, err)
	}
	return admission.Request{AdmissionRequest: *review.Request}
}

func newEngine(t *testing.T) *policy.Engine {
	t.Helper()
	engine, err := policy.New(t.Context())
	if err != nil {
		t.Fatalf("creating the policy engine: %v", err)
	}
	return engine
}

// OpenShift's system:admin editing a field that last-applied owns is
// denied like any person, not let through as a component.
func TestSystemAdminEditIsReviewed(t *testing.T) {
	req := loadReview(t, "deployment-edit")
	req.UserInfo.Username, req.UserInfo.Groups = "system:admin", []string{"system:cluster-admins", "system:authenticated"}
	r := NewReviewer(newEngine(t), loadCluster(t, filepath.Join("testdata", "reviews", "deployment-edit.cluster.json")))
	resp := r.Validating().Handle(t.Context(), req)
	if resp.Allowed || !strings.HasPrefix(resp.Result.Message, "[imperative-edit] ") {
		t.Errorf("validating answer: allowed %v, %v; want denied with [imperative-edit]", resp.Allowed, resp.Result)
	}
}
