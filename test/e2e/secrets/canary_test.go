package secrets_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// canary returns a planted value: a long random string, so that a
// fragment of its base64 found anywhere is the canary.
func canary(t *testing.T, what string) string {
	t.Helper()
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "canary-" + what + "-" + hex.EncodeToString(b)
}

// forms are what a leak of s looks like: s, its base64, and every
// 16-character fragment of the base64 of s and of s shifted by one and
// two bytes (a value inside a longer base64 text, or a base64 line cut
// anywhere) that encodes only the random part of s, which no other text
// has.
func forms(s string) []string {
	out := []string{s, b64(s)}
	random := strings.LastIndex(s, "-") + 1
	for shift := range 3 {
		enc := strings.TrimRight(b64(s[shift:]), "=")
		// The last group depends on what follows s; leave it out.
		for i := 0; i+16 <= len(enc)-4; i += 4 {
			if shift+i/4*3 >= random {
				out = append(out, enc[i:i+16])
			}
		}
	}
	return out
}

// A Secret with a value applied through data, one through stringData,
// a service account's edit of the first (drift), a key the service
// account added (an orphan), a person's denied edit, and an apply over
// the edit; then every kubectl hygiene command and output format on it,
// and the server's log, metrics, events and reports: no output holds a
// planted value, its base64 or a fragment of it.
func TestSecretValuesAppearInNoOutput(t *testing.T) {
	f := framework.New(t)
	f.InstallOpenReportsCRDs(t)
	var planted []string
	add := func(what string) string {
		v := canary(t, what)
		planted = append(planted, v)
		return v
	}
	tokenV1, passwordV1, tokenEdit, extra, tokenV2, passwordV2 := add("token1"), add("password1"), add("token-edit"), add("extra"), add("token2"), add("password2")
	k := f.Kubectl
	robot := f.KubectlAsServiceAccount(t, "deployer")
	var outputs []framework.Result
	run := func(r framework.Result) framework.Result { outputs = append(outputs, r); return r }

	dir := t.TempDir()
	v1 := write(t, dir, "v1.yaml", secretManifest(tokenV1, passwordV1))
	v2 := write(t, dir, "v2.yaml", secretManifest(tokenV2, passwordV2))
	run(k.Run(t, "apply", "-f", v1).MustSucceed(t))
	editPatch := fmt.Sprintf(`{"data":{"token":%q}}`, b64(tokenEdit))
	denied := run(k.Run(t, "patch", "secret/canary", "-p", editPatch).MustFail(t))
	wantContains(t, denied.Stderr, "denied the request: [imperative-edit] Secret "+f.Namespace+"/canary: ")
	warned := run(robot.Run(t, "patch", "secret/canary", "-p", editPatch).MustSucceed(t))
	wantContains(t, warned.Stderr, "Warning: [imperative-edit] Secret ")
	run(robot.Run(t, "patch", "secret/canary", "-p", fmt.Sprintf(`{"data":{"extra":%q}}`, b64(extra))).MustSucceed(t))
	// The predictions of the apply over the edit, in every format.
	for _, o := range []string{"", "json", "yaml"} {
		run(hygiene(t, f, o, "diff", "-f", v2))
	}
	reapplied := run(k.Run(t, "apply", "-f", v2).MustSucceed(t))
	wantContains(t, reapplied.Stderr, "Warning: [apply-reverts-drift] Secret ")
	wantContains(t, reapplied.Stderr, "Warning: [orphaned-field] Secret ")
	// Drift left for the audit and explain: the service account's edit again.
	run(robot.Run(t, "patch", "secret/canary", "-p", editPatch).MustSucceed(t))
	for _, o := range []string{"", "json", "yaml"} {
		run(hygiene(t, f, o, "explain", "secret/canary"))
	}
	for _, o := range []string{"", "table", "json", "yaml"} {
		r := run(hygiene(t, f, o, "audit", "--kind", "secrets"))
		wantContains(t, r.Stdout, "canary")
	}
	fixPreview := run(f.Hygiene(t, "audit", "-n", f.Namespace, "--kind", "secrets", "--fix=dry-run"))
	wantContains(t, fixPreview.Stdout, "secret/canary")
	run(f.Hygiene(t, "audit", "-n", f.Namespace, "--kind", "secrets", "--fix=apply"))
	run(f.Hygiene(t, "audit", "-n", f.Namespace, "--kind", "secrets", "--fix=apply"))
	cases := testCases(t, f, dir, tokenEdit)
	for _, o := range []string{"", "junit"} {
		r := run(hygiene(t, f, o, "test", cases))
		wantContains(t, r.Stdout, "secret edit")
	}
	for _, o := range []string{"", "json", "yaml"} {
		run(hygiene(t, f, o, "migrate", "--server-side", "--dry-run", "--kind", "secrets"))
	}
	run(f.Hygiene(t, "migrate", "--server-side", "-n", f.Namespace, "--kind", "secrets", "--field-manager", "canary-applier"))

	// A report in the namespace: a ConfigMap made without last-applied.
	k.Run(t, "create", "configmap", "made", "--from-literal=a=b").MustSucceed(t)
	var reports string
	framework.Eventually(t, 60*time.Second, "an OpenReports Report in the namespace", func(ctx context.Context) (bool, error) {
		reports = allReports(ctx, t)
		return strings.Contains(reports, `"made"`), nil
	})

	haystacks := map[string]string{"server log": serverLog(t), "metrics": framework.WebhookMetrics(t), "events": allEvents(t, f), "reports": reports}
	for _, r := range outputs {
		haystacks["kubectl "+strings.Join(r.Args, " ")] += r.Stdout + r.Stderr
	}
	for where, text := range haystacks {
		for _, s := range planted {
			for _, form := range forms(s) {
				if i := strings.Index(text, form); i >= 0 {
					t.Errorf("%s holds %q of the Secret value %q: …%s…", where, form, s, text[max(0, i-200):min(len(text), i+len(form)+50)])
					break
				}
			}
		}
	}
}

// hygiene runs kubectl hygiene with -o output (none when "") in the
// test's namespace.
func hygiene(t *testing.T, f *framework.Framework, output string, args ...string) framework.Result {
	t.Helper()
	if output != "" {
		args = append(args, "-o", output)
	}
	var r framework.Result
	if args[0] == "test" {
		r = offline(t, args...)
	} else {
		r = f.Hygiene(t, append(args, "-n", f.Namespace)...)
	}
	if r.ExitCode > 1 {
		t.Errorf("kubectl hygiene %s: exit %d\n%s%s", strings.Join(args, " "), r.ExitCode, r.Stdout, r.Stderr)
	}
	return r
}

// offline runs kubectl hygiene without a cluster (kubectl hygiene test
// has no --kubeconfig).
func offline(t *testing.T, args ...string) framework.Result {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), framework.HygieneBinary(t), args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	r := framework.Result{Args: append([]string{"hygiene"}, args...)}
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("running kubectl hygiene %s: %v", strings.Join(args, " "), err)
		}
		r.ExitCode = exit.ExitCode()
	}
	r.Stdout, r.Stderr = stdout.String(), stderr.String()
	t.Logf("$ kubectl %s\n%s%s(exit %d)", strings.Join(r.Args, " "), r.Stdout, r.Stderr, r.ExitCode)
	return r
}

// testCases writes a file of kubectl hygiene test cases whose review is a
// person's edit of the live Secret, expected to draw no decision: the
// case fails, and its diff prints the decisions.
func testCases(t *testing.T, f *framework.Framework, dir, value string) string {
	t.Helper()
	out := f.Kubectl.Run(t, "get", "secret/canary", "-o", "json", "--show-managed-fields").MustSucceed(t).Stdout
	var old map[string]any
	if err := json.Unmarshal([]byte(out), &old); err != nil {
		t.Fatal(err)
	}
	edited := map[string]any{}
	if err := json.Unmarshal([]byte(out), &edited); err != nil {
		t.Fatal(err)
	}
	edited["data"].(map[string]any)["token"] = b64(value + "-again")
	review := map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": map[string]any{
		"uid": "1", "kind": map[string]any{"group": "", "version": "v1", "kind": "Secret"},
		"resource": map[string]any{"group": "", "version": "v1", "resource": "secrets"},
		"name":     "canary", "namespace": f.Namespace, "operation": "UPDATE",
		"userInfo": map[string]any{"username": "alice", "groups": []string{"system:authenticated"}},
		"object":   edited, "oldObject": old,
		"options": map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "UpdateOptions", "fieldManager": "kubectl-patch"},
	}}
	file := map[string]any{"cases": []any{map[string]any{"name": "secret edit", "review": review, "expect": []any{}}}}
	data, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	return write(t, dir, "secret_test.yaml", string(data))
}

func secretManifest(token, password string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: canary
type: Opaque
data:
  token: %s
stringData:
  password: %s
`, b64(token), password)
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func wantContains(t *testing.T, text, want string) {
	t.Helper()
	if !strings.Contains(text, want) {
		t.Errorf("output lacks %q:\n%s", want, text)
	}
}

// serverLog is the server's log, which must mention secret/canary.
func serverLog(t *testing.T) string {
	t.Helper()
	log := framework.ServerLog(t)
	if !strings.Contains(log, "canary") {
		t.Fatalf("the server log does not mention secret/canary:\n%s", log)
	}
	return log
}

// allEvents is every event in the cluster, which must name secret/canary.
func allEvents(t *testing.T, f *framework.Framework) string {
	t.Helper()
	events := f.AllEvents(t)
	if !strings.Contains(events, "canary") {
		t.Errorf("no event names secret/canary")
	}
	return events
}

// allReports is every OpenReports Report and ClusterReport, as JSON.
func allReports(ctx context.Context, t *testing.T) string {
	t.Helper()
	cfg, err := framework.ControlPlane(t).RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out []any
	for _, resource := range []string{"reports", "clusterreports"} {
		list, err := client.Resource(schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: resource}).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("listing %s: %v", resource, err)
		}
		out = append(out, list.UnstructuredContent())
	}
	data, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
