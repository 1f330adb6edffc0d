package admissionevents_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

const seeds = "../seeds/testdata/"

// eventsHeader is the header kubectl events prints.
const eventsHeader = `LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE`

// warnings returns kubectl events' Warning events of object.
func warnings(t *testing.T, k framework.Kubectl, object string) string {
	t.Helper()
	return k.Run(t, "events", "--for", object, "--types=Warning").MustSucceed(t).Stdout
}

// eventLine is the kubectl events line of a Warning event, modulo its
// age column.
func eventLine(reason, object, message string) string {
	return `\S+\s+Warning\s+` + reason + `\s+` + regexp.QuoteMeta(object) + `\s+` + regexp.QuoteMeta(message)
}

// waitForWarnings waits until object has n Warning events.
func waitForWarnings(t *testing.T, k framework.Kubectl, object string, n int) string {
	t.Helper()
	var out string
	framework.Eventually(t, 15*time.Second, fmt.Sprintf("%d Warning events on %s", n, object), func(_ context.Context) (bool, error) {
		out = warnings(t, k, object)
		return strings.Count(out, "Warning") >= n, nil
	})
	return out
}

// A denied kubectl set image leaves a Warning event on the Deployment
// whose note is the denial's message, and the API server's audit log
// records the rule, its action and the classification for that PATCH; the
// same write with --dry-run=server is denied and audited alike, and leaves
// no event.
func TestDeniedSetImageLeavesAnEventAndAuditAnnotations(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/deployment.yaml").MustSucceed(t)
	denial := fmt.Sprintf("[imperative-edit] Deployment %[1]s/web: this write by apply-hygiene-admin (field manager kubectl-set) changes fields that last-applied owns: "+
		`spec.template.spec.containers[name=nginx].image (last-applied "nginx:1.14.2", now "nginx:1.99"); `+
		"the next kubectl apply puts the last-applied values back without a word. Put the change in your manifest and run kubectl apply, "+
		"or hand a field over to its new writer by deleting it from last-applied first with: kubectl hygiene handover deployments.apps/web -n %[1]s 'spec.template.spec.containers[name=nginx].image'", f.Namespace)
	stderr := "error: failed to patch image update to pod template: " + framework.DeniedPrefix + denial

	dry := k.Run(t, "set", "image", "deployment/web", "nginx=nginx:1.99", "--dry-run=server").MustFail(t)
	framework.WantLines(t, dry.Stderr, stderr)
	// Events are sent off the review's path: give one the time the real
	// write's event takes many times over before saying there is none.
	time.Sleep(3 * time.Second)
	none := k.Run(t, "events", "--for", "deployment/web", "--types=Warning").MustSucceed(t)
	framework.WantLines(t, none.Stdout)
	framework.WantLines(t, none.Stderr, "No events found in "+f.Namespace+" namespace.")

	res := k.Run(t, "set", "image", "deployment/web", "nginx=nginx:1.99").MustFail(t)
	framework.WantLines(t, res.Stderr, stderr)
	framework.WantMatch(t, waitForWarnings(t, k, "deployment/web", 1), eventsHeader, eventLine("ImperativeEdit", "Deployment/web", denial))

	denied := map[string]string{
		"validate.apply-hygiene.io/rule":           "imperative-edit",
		"validate.apply-hygiene.io/action":         "deny",
		"validate.apply-hygiene.io/classification": "imperative",
	}
	// kubectl apply created the object (a POST): the log holds exactly
	// the two PATCHes of kubectl set image.
	wantWrites(t, f.Namespace, "web", []loggedWrite{
		{Code: 403, DryRun: true, Annotations: denied},
		{Code: 403, Annotations: denied},
	})
}

// A warn decision records a Warning event too: seed 003's apply after
// kubectl rollout restart warns about the orphaned restartedAt; the event
// carries the warning, and the audit log records the rule for the apply
// (and that the mutating pass reviewed it and allowed it).
func TestOrphanedFieldWarningLeavesAnEvent(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", seeds+"seed003-v1.yaml").MustSucceed(t)
	k.Run(t, "rollout", "restart", "deployment/nginx-deployment").MustSucceed(t)
	apply := k.Run(t, "apply", "-f", seeds+"seed003-v2.yaml").MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "deployment.apps/nginx-deployment configured")
	warning, ok := strings.CutPrefix(strings.TrimSuffix(apply.Stderr, "\n"), "Warning: ")
	if !ok || !strings.HasPrefix(warning, "[orphaned-field] Deployment "+f.Namespace+"/nginx-deployment: ") || strings.Contains(warning, "\n") {
		t.Fatalf("kubectl apply printed %q, want one [orphaned-field] warning", apply.Stderr)
	}
	framework.WantMatch(t, waitForWarnings(t, k, "deployment/nginx-deployment", 1), eventsHeader,
		eventLine("OrphanedField", "Deployment/nginx-deployment", warning))

	wantWrites(t, f.Namespace, "nginx-deployment", []loggedWrite{
		// kubectl rollout restart: an imperative write of a field
		// last-applied does not own.
		{Code: 200, Annotations: map[string]string{
			"validate.apply-hygiene.io/action":         "allow",
			"validate.apply-hygiene.io/classification": "rollout-restart",
		}},
		// apply-hygiene's removal proof of restartedAt while it reviews
		// the apply: a dry run, which the webhooks are not called for
		// (match condition not-a-removal-proof), so no annotation.
		{Code: 200, DryRun: true, Annotations: map[string]string{}},
		{Code: 200, Annotations: map[string]string{
			"mutate.apply-hygiene.io/action":           "allow",
			"mutate.apply-hygiene.io/classification":   "client-side-apply",
			"validate.apply-hygiene.io/rule":           "orphaned-field",
			"validate.apply-hygiene.io/action":         "warn",
			"validate.apply-hygiene.io/classification": "client-side-apply",
		}},
	})
}
