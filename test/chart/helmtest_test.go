package chart_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// testName is the helm test's pod, ServiceAccount and namespace for the
// devenv release.
const testName = devenv.Release + "-test"

// TestHelmTestOnTheControlPlane runs `helm test` on the local control
// plane against the server running as a local process (url mode). The
// control plane has no kubelet, so the test acts as one for the test pod
// only: it runs the pod's command (the script from the pod's ConfigMap,
// with the pod's environment) as the pod's ServiceAccount, with its token,
// and writes the exit status into the pod's phase. Everything else — the
// hook, the dry-run write, the webhook's answer, helm's verdict, the
// garbage collector after helm uninstall — is real. (helm test --logs
// needs a kubelet to read the log from: the pod kept after the test is
// what it reads.)
func TestHelmTestOnTheControlPlane(t *testing.T) {
	binDir := controlplane.RequireTools(t, append([]string{"helm"}, controlplane.Binaries...)...)
	cp, err := controlplane.Start(t.Context(), controlplane.Options{BinDir: binDir})
	if err != nil {
		t.Fatalf("starting the control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	wh, err := devenv.Start(t.Context(), cp, devenv.Options{RepoRoot: repoRoot(t), BinDir: binDir, Dir: t.TempDir(), Values: []string{"test.enabled=true"}})
	if err != nil {
		t.Fatalf("starting apply-hygiene: %v", err)
	}
	t.Cleanup(func() {
		if err := wh.Close(); err != nil {
			t.Errorf("stopping apply-hygiene: %v", err)
		}
	})
	k := clusterKubectl{t: t, bin: filepath.Join(binDir, "kubectl"), kubeconfig: cp.KubeconfigPath()}

	// The webhook's message about the test's dry-run kubectl set image.
	message := "[imperative-edit] Deployment " + testName + "/" + testName + ": this write by system:serviceaccount:" +
		devenv.Namespace + ":" + testName + " (field manager kubectl-set) changes fields that last-applied owns: " +
		`spec.template.spec.containers[name=app].image (last-applied "registry.k8s.io/pause:3.10", now "registry.k8s.io/pause:helm-test"); ` +
		"the next kubectl apply puts the last-applied values back without a word. Put the change in your manifest and run kubectl apply, " +
		"or hand a field over to its new writer by deleting it from last-applied first with: kubectl hygiene handover deployments.apps/" +
		testName + " -n " + testName + " 'spec.template.spec.containers[name=app].image'"
	// In this order: each test replaces the pod the last one left.
	steps := []struct {
		name      string
		values    []string
		wantPass  bool
		wantLines []string
	}{
		{
			name: "by default the webhook warns the test's service account", wantPass: true,
			wantLines: []string{
				"Warning: " + message,
				"deployment.apps/" + testName + " image updated (server dry run)",
				"PASS: the webhook warned about the imperative edit",
			},
		},
		{
			name:   "a policy that denies service accounts' imperative edits",
			values: []string{"policy.rules.imperative-edit.serviceAccountAction=deny"}, wantPass: true,
			wantLines: []string{
				`error: failed to patch image update to pod template: admission webhook "validate.apply-hygiene.io" denied the request: ` + message,
				"PASS: the webhook denied the imperative edit",
			},
		},
		{
			name:   "with imperative-edit off the webhook says nothing and the test fails",
			values: []string{"policy.rules.imperative-edit.action=off", "policy.rules.imperative-edit.serviceAccountAction=off"},
			wantLines: []string{
				"deployment.apps/" + testName + " image updated (server dry run)",
				"FAIL: kubectl exited 0 without the webhook's [imperative-edit] warning or denial",
			},
		},
	}
	for i, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			if i > 0 {
				if err := wh.Reconfigure(t.Context(), cp, append([]string{"test.enabled=true"}, step.values...)...); err != nil {
					t.Fatalf("reconfiguring apply-hygiene: %v", err)
				}
			}
			helmOut, podOut, helmErr := runHelmTest(t, k, binDir)
			t.Logf("helm test:\n%s%v\ntest pod:\n%s", helmOut, helmErr, podOut)
			if step.wantPass != (helmErr == nil) {
				t.Errorf("helm test error = %v, want passing %v", helmErr, step.wantPass)
			}
			if diff := cmp.Diff(step.wantLines, strings.Split(strings.TrimSpace(podOut), "\n")); diff != "" {
				t.Errorf("the test pod's output (-want +got):\n%s", diff)
			}
			wantPhase := "Failed"
			if step.wantPass {
				wantPhase = "Succeeded"
			}
			wantSuites := []string{"TEST SUITE:     " + testName, "Phase:          " + wantPhase}
			var suites []string
			for line := range strings.Lines(helmOut) {
				if strings.HasPrefix(line, "TEST SUITE:") || strings.HasPrefix(line, "Phase:") {
					suites = append(suites, strings.TrimSpace(line))
				}
			}
			if diff := cmp.Diff(wantSuites, suites); diff != "" {
				t.Errorf("helm test's suites (-want +got):\n%s", diff)
			}
			checkKept(t, k, corev1.PodPhase(wantPhase))
		})
	}

	// helm uninstall deletes the ConfigMap that owns the kept pod, and the
	// garbage collector the pod.
	uninstall := exec.CommandContext(t.Context(), filepath.Join(binDir, "helm"), "uninstall", devenv.Release, "--namespace", devenv.Namespace)
	uninstall.Env = append(os.Environ(), "KUBECONFIG="+k.kubeconfig, "HELM_CACHE_HOME="+t.TempDir(),
		"HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	if out, err := uninstall.CombinedOutput(); err != nil {
		t.Fatalf("helm uninstall: %v\n%s", err, out)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		pod, err := k.run("get", "pod", testName, "--namespace", devenv.Namespace, "--ignore-not-found", "-o", "name")
		if err != nil {
			t.Fatal(err)
		}
		if pod == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still there a minute after helm uninstall", strings.TrimSpace(pod))
		}
		time.Sleep(time.Second)
	}
}

// runHelmTest runs helm test while acting as the test pod's kubelet; it
// returns helm's output, the pod's output and helm's error.
func runHelmTest(t *testing.T, k clusterKubectl, binDir string) (helmOut, podOut string, helmErr error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), filepath.Join(binDir, "helm"), "test", devenv.Release,
		"--namespace", devenv.Namespace, "--timeout", "2m")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+k.kubeconfig, "HELM_CACHE_HOME="+t.TempDir(),
		"HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting helm test: %v", err)
	}
	podOut, runErr := k.runTestPod()
	helmErr = cmd.Wait()
	if runErr != nil {
		t.Fatalf("running the test pod: %v\n%s", runErr, podOut)
	}
	if helmErr != nil {
		helmErr = fmt.Errorf("%w: %s", helmErr, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), podOut, helmErr
}

// checkKept checks that helm test kept its pod, in phase, owned by the
// ConfigMap it runs its script from, and the ConfigMap.
func checkKept(t *testing.T, k clusterKubectl, phase corev1.PodPhase) {
	t.Helper()
	out, err := k.run("get", "pod", testName, "--namespace", devenv.Namespace, "-o", "json")
	if err != nil {
		t.Fatalf("the test pod after helm test: %v", err)
	}
	var pod corev1.Pod
	if err := json.Unmarshal([]byte(out), &pod); err != nil {
		t.Fatalf("decoding the test pod: %v", err)
	}
	uid, err := k.run("get", "configmap", testName, "--namespace", devenv.Namespace, "-o", "jsonpath={.metadata.uid}")
	if err != nil {
		t.Fatalf("the test ConfigMap after helm test: %v", err)
	}
	var owners []string
	for _, o := range pod.OwnerReferences {
		owners = append(owners, o.APIVersion+" "+o.Kind+" "+o.Name+" "+string(o.UID))
	}
	if diff := cmp.Diff([]string{"v1 ConfigMap " + testName + " " + uid}, owners); diff != "" {
		t.Errorf("the kept test pod's owners (-want +got):\n%s", diff)
	}
	if pod.Status.Phase != phase {
		t.Errorf("the kept test pod's phase = %s, want %s", pod.Status.Phase, phase)
	}
}

// clusterKubectl runs the pinned kubectl as the control plane's admin.
type clusterKubectl struct {
	t               *testing.T
	bin, kubeconfig string
}

func (k clusterKubectl) run(args ...string) (string, error) {
	cmd := exec.CommandContext(k.t.Context(), k.bin, append([]string{"--kubeconfig", k.kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+k.t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// runTestPod waits for the test pod, runs its command as its
// ServiceAccount and sets its phase from the exit status, as the kubelet
// would.
func (k clusterKubectl) runTestPod() (string, error) {
	pod, err := k.waitForPod()
	if err != nil {
		return "", err
	}
	c := pod.Spec.Containers[0]
	script, err := k.run("get", "configmap", pod.Spec.Volumes[0].ConfigMap.Name, "--namespace", pod.Namespace,
		"-o", "go-template={{index .data \"helm-test.sh\"}}")
	if err != nil {
		return "", err
	}
	if want := []string{"sh", "/etc/apply-hygiene/test/helm-test.sh"}; strings.Join(c.Command, " ") != strings.Join(want, " ") {
		return "", fmt.Errorf("test pod command %q, want %q", c.Command, want)
	}
	kubeconfig, err := k.serviceAccountKubeconfig(pod.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return "", err
	}
	dir := k.t.TempDir()
	path := filepath.Join(dir, "helm-test.sh")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		return "", fmt.Errorf("writing the test script: %w", err)
	}
	cmd := exec.CommandContext(k.t.Context(), "sh", path)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "KUBECTL=" + k.bin, "KUBECONFIG=" + kubeconfig}
	for _, e := range c.Env {
		value := e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			// The downward API fields the pod reads.
			value = map[string]string{"metadata.name": pod.Name, "metadata.namespace": pod.Namespace}[e.ValueFrom.FieldRef.FieldPath]
		}
		cmd.Env = append(cmd.Env, e.Name+"="+value)
	}
	out, runErr := cmd.CombinedOutput()
	phase := corev1.PodSucceeded
	var exit *exec.ExitError
	switch {
	case errors.As(runErr, &exit):
		phase = corev1.PodFailed
	case runErr != nil:
		return string(out), fmt.Errorf("running the test script: %w", runErr)
	}
	patch := fmt.Sprintf(`{"status":{"phase":%q}}`, phase)
	if _, err := k.run("patch", "pod", pod.Name, "--namespace", pod.Namespace, "--subresource=status", "--type=merge", "-p", patch); err != nil {
		return string(out), err
	}
	return string(out), nil
}

func (k clusterKubectl) waitForPod() (*corev1.Pod, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		out, err := k.run("get", "pod", testName, "--namespace", devenv.Namespace, "-o", "json", "--ignore-not-found")
		if err != nil {
			return nil, err
		}
		if out != "" {
			var pod corev1.Pod
			if err := json.Unmarshal([]byte(out), &pod); err != nil {
				return nil, fmt.Errorf("decoding the test pod: %w", err)
			}
			if pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodPending {
				return &pod, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, errors.New("no pending test pod within a minute")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// serviceAccountKubeconfig writes a kubeconfig with a token of the
// ServiceAccount, the identity the pod's kubectl would have.
func (k clusterKubectl) serviceAccountKubeconfig(namespace, name string) (string, error) {
	token, err := k.run("create", "token", name, "--namespace", namespace)
	if err != nil {
		return "", err
	}
	server, err := k.run("config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}")
	if err != nil {
		return "", err
	}
	ca, err := k.run("config", "view", "--minify", "--raw", "-o", "jsonpath={.clusters[0].cluster.certificate-authority-data}")
	if err != nil {
		return "", err
	}
	if ca == "" {
		return "", errors.New("the admin kubeconfig has no inline CA")
	}
	if _, err := base64.StdEncoding.DecodeString(ca); err != nil {
		return "", fmt.Errorf("decoding the admin kubeconfig's CA: %w", err)
	}
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: local, cluster: {server: %q, certificate-authority-data: %q}}]
users: [{name: sa, user: {token: %q}}]
contexts: [{name: sa, context: {cluster: local, user: sa}}]
current-context: sa
`, server, ca, strings.TrimSpace(token))
	path := filepath.Join(k.t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		return "", fmt.Errorf("writing the ServiceAccount's kubeconfig: %w", err)
	}
	return path, nil
}
