package webhook_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// Seed 002's kubectl scale, done with kubectl hygiene handover: the scale
// of replicas that last-applied owns is denied with a message that ends
// with the hand-over command; that command, run as printed (kubectl finds
// the plugin on PATH), hands replicas over; the scale then passes, kubectl
// hygiene diff predicts that the apply of the manifest without replicas
// changes nothing, and that apply leaves the scaled count alone.
func TestHandoverLetsTheNewWriterKeepTheField(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/deployment-v1.yaml").MustSucceed(t)
	denied := k.Run(t, "scale", "deployment/web", "--replicas=5").MustFail(t)
	framework.WantLines(t, denied.Stderr, "Error from server (Forbidden): "+framework.DeniedPrefix+
		imperativeDenial(f.Namespace, controlplane.AdminUser, "", "spec.replicas (last-applied 3, now 5)", "spec.replicas"))
	command := printedHandover(t, denied.Stderr)
	framework.WantLines(t, command, "kubectl hygiene handover deployments.apps/web -n "+f.Namespace+" spec.replicas")

	dry := f.Hygiene(t, "handover", "deployment/web", "spec.replicas", "-n", f.Namespace, "--dry-run").MustSucceed(t)
	framework.WantLines(t, dry.Stdout,
		"Deployment "+f.Namespace+"/web: last-applied no longer has spec.replicas (server dry run: nothing stored)",
		"The next kubectl apply neither sets nor deletes them: they are their new writer's.",
		"Drop them from your manifest too: an apply of a manifest that sets them takes them back.")
	asJSON := f.Hygiene(t, "handover", "deployment/web", "spec.replicas", "-n", f.Namespace, "--dry-run", "-o", "json", "-f", "testdata/deployment-v1.yaml").MustSucceed(t)
	want := `{"object":{"apiVersion":"apps/v1","kind":"Deployment","namespace":"` + f.Namespace + `","name":"web"},"handedOver":["spec.replicas"],"dryRun":true,"manifestStillSets":["spec.replicas"]}`
	if got := compactJSON(t, asJSON.Stdout); got != want {
		t.Errorf("-o json:\n got %s\nwant %s", got, want)
	}
	if la := k.JSONPath(t, "deployment/web", `{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`); !strings.Contains(la, `"replicas":3`) {
		t.Fatalf("the dry run wrote last-applied: %s", la)
	}
	if record := k.JSONPath(t, "deployment/web", `{.metadata.annotations.apply-hygiene\.io/handed-over}`); strings.TrimSpace(record) != "" {
		t.Fatalf("the dry run wrote the record of hand-overs: %s", record)
	}
	reminder := f.Hygiene(t, "handover", "deployment/web", "spec.replicas", "-n", f.Namespace, "--dry-run", "-f", "testdata/deployment-v1.yaml").MustSucceed(t)
	framework.WantLines(t, reminder.Stdout,
		"Deployment "+f.Namespace+"/web: last-applied no longer has spec.replicas (server dry run: nothing stored)",
		"The next kubectl apply neither sets nor deletes them: they are their new writer's.",
		"testdata/deployment-v1.yaml still sets spec.replicas: drop it before the next apply, or that apply takes it back.")

	out := k.RunPrinted(t, command)
	framework.WantLines(t, strings.TrimSpace(out),
		"Deployment "+f.Namespace+"/web: last-applied no longer has spec.replicas",
		"The next kubectl apply neither sets nor deletes them: they are their new writer's.",
		"Drop them from your manifest too: an apply of a manifest that sets them takes them back.")

	scale := k.Run(t, "scale", "deployment/web", "--replicas=5").MustSucceed(t)
	framework.WantLines(t, scale.Stdout, "deployment.apps/web scaled")
	framework.WantLines(t, scale.Stderr)

	manifest, err := os.ReadFile("testdata/deployment-v1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	withoutReplicas := framework.WriteFile(t, "web.yaml", strings.Replace(string(manifest), "  replicas: 3\n", "", 1), 0o644)
	diff := f.Hygiene(t, "diff", "-f", withoutReplicas, "-n", f.Namespace).MustSucceed(t)
	framework.WantLines(t, diff.Stdout,
		"Deployment "+f.Namespace+"/web: unchanged (strategicMergePatch)",
		"No findings.")
	apply := framework.ApplyPredicted(t, k, withoutReplicas).MustSucceed(t)
	framework.WantLines(t, apply.Stdout, "deployment.apps/web unchanged")
	framework.WantLines(t, apply.Stderr)
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.replicas}"), "5")
}

// handoverWith finds the hand-over command at the end of a denial or
// warning: "… first with: kubectl hygiene handover …".
var handoverWith = regexp.MustCompile(`first with: (kubectl hygiene handover .*)$`)

// printedHandover is the hand-over command that the last line of stderr
// ends with.
func printedHandover(t *testing.T, stderr string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	m := handoverWith.FindStringSubmatch(lines[len(lines)-1])
	if m == nil {
		t.Fatalf("no hand-over command at the end of:\n%s", stderr)
	}
	return m[1]
}

// A path that last-applied does not have writes nothing and says so.
func TestHandoverOfAFieldLastAppliedLacksWritesNothing(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/deployment-v1.yaml").MustSucceed(t)
	// kube-controller-manager keeps writing the Deployment (revision,
	// status), so resourceVersion is no witness: what a hand-over writes is
	// last-applied, as kubectl-client-side-apply, so those two must stay.
	const written = `{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}` +
		`{.metadata.managedFields[?(@.manager=="kubectl-client-side-apply")]}`
	before := k.JSONPath(t, "deployment/web", written)
	res := f.Hygiene(t, "handover", "deployment/web", "spec.paused", "-n", f.Namespace).MustFail(t)
	framework.WantLines(t, res.Stderr, "error: Deployment "+f.Namespace+"/web: last-applied has no spec.paused; nothing written")
	if after := k.JSONPath(t, "deployment/web", written); after != before {
		t.Errorf("the refused hand-over wrote: last-applied and its entry were\n%s\nand are\n%s", before, after)
	}
}

// compactJSON is s without insignificant white space.
func compactJSON(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	return b.String()
}

// An apply that lands between handover's read and its write, on the real
// API server: handover's requests go through a proxy that runs kubectl
// apply (replicas 4) just before it forwards the PATCH. The API server
// refuses the guarded JSON patch (its test of last-applied fails), so
// handover exits 1 having written nothing: last-applied is the concurrent
// apply's, replicas included.
func TestHandoverLosesToAnApplyInBetween(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	k.Run(t, "apply", "-f", "testdata/deployment-v1.yaml").MustSucceed(t)
	manifest, err := os.ReadFile("testdata/deployment-v1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	replicas4 := framework.WriteFile(t, "web-4.yaml", strings.Replace(string(manifest), "  replicas: 3\n", "  replicas: 4\n", 1), 0o644)

	cfg, err := framework.ControlPlane(t).RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	apiServer, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(apiServer)
	proxy.Transport = transport
	var (
		mu             sync.Mutex
		between        *framework.Result
		appliedBetween string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/deployments/web") {
			mu.Lock()
			if between == nil {
				res := k.Run(t, "apply", "-f", replicas4)
				between = &res
				if dep, err := f.Client.AppsV1().Deployments(f.Namespace).Get(r.Context(), "web", metav1.GetOptions{}); err == nil {
					appliedBetween = dep.Annotations["kubectl.kubernetes.io/last-applied-configuration"]
				}
			}
			mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	kubeconfig := framework.WriteFile(t, "proxy.kubeconfig", `apiVersion: v1
kind: Config
clusters:
- name: proxy
  cluster:
    server: `+srv.URL+`
users:
- name: admin
  user: {}
contexts:
- name: proxy
  context:
    cluster: proxy
    user: admin
    namespace: `+f.Namespace+`
current-context: proxy
`, 0o600)

	args := []string{"handover", "deployment/web", "spec.replicas", "--kubeconfig", kubeconfig}
	cmd := exec.CommandContext(t.Context(), framework.HygieneBinary(t), args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	res := framework.HygieneResult(t, args, cmd.Run(), stdout.String(), stderr.String()).MustFail(t)

	mu.Lock()
	defer mu.Unlock()
	if between == nil {
		t.Fatal("handover sent no PATCH of deployment/web")
	}
	framework.WantLines(t, between.MustSucceed(t).Stdout, "deployment.apps/web configured")
	framework.WantLines(t, res.Stdout)
	if want := "error: Deployment " + f.Namespace + "/web: last-applied changed since it was read (an apply in between?); nothing written, run handover again: "; !strings.HasPrefix(res.Stderr, want) {
		t.Errorf("stderr %q, want it to start with %q", res.Stderr, want)
	}
	la := k.JSONPath(t, "deployment/web", `{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`)
	if !strings.Contains(la, `"replicas":4`) || la != appliedBetween {
		t.Errorf("last-applied %s, want the concurrent apply's %s: handover wrote", la, appliedBetween)
	}
	framework.WantLines(t, k.JSONPath(t, "deployment/web", "{.spec.replicas}"), "4")
}

// Many fields at once (found by review: the warning, cut at 1024 bytes,
// cut the hand-over command in the middle): a service account's edit of 8
// annotations that last-applied owns, with long values, is warned with a
// message cut before its hand-over command, which stays whole, names the
// first 5 fields after -n, and says outside the command how many it
// leaves out; run as printed, it hands those 5 over.
func TestHandoverOfManyFieldsStaysWhole(t *testing.T) {
	f := framework.New(t)
	k := f.Kubectl
	notes := func(value string) map[string]string {
		m := map[string]string{}
		for i := 1; i <= 8; i++ {
			m[fmt.Sprintf("example.com/note-%d", i)] = strings.Repeat(value, 300)
		}
		return m
	}
	raw, err := os.ReadFile("testdata/deployment-v1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	withNotes := strings.Replace(string(raw), "  name: web\n", "  name: web\n  annotations:\n"+yamlMap(notes("a"), "    "), 1)
	k.Run(t, "apply", "-f", framework.WriteFile(t, "web.yaml", withNotes, 0o644)).MustSucceed(t)

	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": notes("b")}})
	if err != nil {
		t.Fatal(err)
	}
	robot := f.KubectlAsServiceAccount(t, "robot")
	res := robot.Run(t, "patch", "deployment/web", "--type=merge", "-p", string(patch)).MustSucceed(t)
	var warning string
	for _, line := range res.StderrLines() {
		if strings.HasPrefix(line, "Warning: [imperative-edit] ") {
			warning = strings.TrimPrefix(line, "Warning: ")
		}
	}
	command := "kubectl hygiene handover deployments.apps/web -n " + f.Namespace
	for i := 1; i <= 5; i++ {
		command += fmt.Sprintf(" 'metadata.annotations[example.com/note-%d]'", i)
	}
	if want := "… with: " + command + " (it names the first 5 of the 8 fields; hand the 3 others over the same way)"; !strings.HasSuffix(warning, want) {
		t.Fatalf("the warning does not end with\n%s\n:\n%s\n%s", want, warning, res.Stderr)
	}
	if len(warning) > 1024 {
		t.Errorf("the warning has %d bytes, over the 1024 cap", len(warning))
	}

	out := k.RunPrinted(t, command)
	framework.WantLines(t, strings.TrimSpace(out),
		"Deployment "+f.Namespace+"/web: last-applied no longer has metadata.annotations[example.com/note-1], metadata.annotations[example.com/note-2], "+
			"metadata.annotations[example.com/note-3], metadata.annotations[example.com/note-4], metadata.annotations[example.com/note-5]",
		"The next kubectl apply neither sets nor deletes them: they are their new writer's.",
		"Drop them from your manifest too: an apply of a manifest that sets them takes them back.")
	lastApplied := k.JSONPath(t, "deployment/web", `{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`)
	for i := 1; i <= 8; i++ {
		if has, want := strings.Contains(lastApplied, fmt.Sprintf(`"example.com/note-%d"`, i)), i > 5; has != want {
			t.Errorf("last-applied has note-%d: %t, want %t:\n%s", i, has, want, lastApplied)
		}
	}
}

// yamlMap writes m as a block of YAML entries, indented by indent, in the
// order of its sorted keys.
func yamlMap(m map[string]string, indent string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s%s: %q\n", indent, k, m[k])
	}
	return b.String()
}
