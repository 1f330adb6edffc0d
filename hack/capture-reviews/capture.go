package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// capture plays scenarios and writes what the recorder saw.
type capture struct {
	cp      *controlplane.ControlPlane
	rec     *recorder
	kubectl string
	out     string
}

func (c *capture) play(ctx context.Context, s scenario) error {
	cfg, err := c.cp.RESTConfig()
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	ns := s.name
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating namespace: %w", err)
	}
	for _, st := range s.setup {
		if err := c.run(ctx, client, ns, c.cp.KubeconfigPath(), st); err != nil {
			return err
		}
	}
	kubeconfig, user := c.cp.KubeconfigPath(), controlplane.AdminUser
	if s.as != "" {
		saNS, name, _ := strings.Cut(s.as, "/")
		if saNS == "" {
			saNS = ns
		}
		if kubeconfig, user, err = c.serviceAccount(ctx, client, ns, saNS, name); err != nil {
			return err
		}
	}
	time.Sleep(time.Second) // let controllers settle before recording
	state, err := snapshot(ctx, c.cp, ns)
	if err != nil {
		return err
	}
	c.rec.take()
	for _, st := range s.record {
		if err := c.run(ctx, client, ns, kubeconfig, st); err != nil {
			return err
		}
	}
	time.Sleep(2 * time.Second)
	if err := c.write(s, user, c.rec.take()); err != nil {
		return err
	}
	return writeJSON(filepath.Join(c.out, s.name+".cluster.json"), state)
}

// snapshot lists what the webhook may read while reviewing the recorded
// steps: the workloads (the parent of a /scale request) and their
// revisions, as stored just before.
func snapshot(ctx context.Context, cp *controlplane.ControlPlane, ns string) (*unstructured.UnstructuredList, error) {
	cfg, err := cp.RESTConfig()
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating dynamic client: %w", err)
	}
	state := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	for _, r := range []string{"deployments", "statefulsets", "daemonsets", "replicasets", "controllerrevisions"} {
		list, err := dyn.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: r}).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", r, err)
		}
		for _, item := range list.Items {
			item.SetAPIVersion("apps/v1")
			item.SetKind(kinds[r])
			state.Items = append(state.Items, item)
		}
	}
	return state, nil
}

var kinds = map[string]string{
	"deployments": "Deployment", "statefulsets": "StatefulSet", "daemonsets": "DaemonSet",
	"replicasets": "ReplicaSet", "controllerrevisions": "ControllerRevision",
}

func writeJSON(path string, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func (c *capture) run(ctx context.Context, client kubernetes.Interface, ns, kubeconfig string, st step) error {
	if st.args[0] == "wait-revisions" {
		n, _ := strconv.Atoi(st.args[2])
		return waitRevisions(ctx, client, ns, st.args[1], n)
	}
	cmd := exec.CommandContext(ctx, c.kubectl, append(st.args, "-n", ns)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "HOME="+os.TempDir())
	cmd.Env = append(cmd.Env, st.env...)
	cmd.Stdin = strings.NewReader(st.stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kubectl %s: %w\n%s", strings.Join(st.args, " "), err, out.String())
	}
	fmt.Printf("%s: kubectl %s\n%s", ns, strings.Join(st.args, " "), out.String())
	return nil
}

func waitRevisions(ctx context.Context, client kubernetes.Interface, ns, selector string, n int) error {
	opts := metav1.ListOptions{LabelSelector: selector}
	for range 150 {
		rs, err := client.AppsV1().ReplicaSets(ns).List(ctx, opts)
		if err != nil {
			return fmt.Errorf("listing replica sets: %w", err)
		}
		crs, err := client.AppsV1().ControllerRevisions(ns).List(ctx, opts)
		if err != nil {
			return fmt.Errorf("listing controller revisions: %w", err)
		}
		if len(rs.Items)+len(crs.Items) >= n {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("timed out waiting for %d revisions of %s", n, selector)
}

// serviceAccount creates the service account saNS/name (if missing) with
// the edit role in ns, and a kubeconfig with a token for it.
func (c *capture) serviceAccount(ctx context.Context, client kubernetes.Interface, ns, saNS, name string) (string, string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := client.CoreV1().ServiceAccounts(saNS).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", "", fmt.Errorf("creating service account: %w", err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: saNS}},
	}
	if _, err := client.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		return "", "", fmt.Errorf("binding service account: %w", err)
	}
	tok, err := client.CoreV1().ServiceAccounts(saNS).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		return "", "", fmt.Errorf("creating token: %w", err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: c.cp.Server(), CertificateAuthorityData: c.cp.CAPEM()}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: name, Namespace: ns}
	cfg.CurrentContext = "local"
	path := filepath.Join(c.cp.Dir(), "kubeconfig-"+ns+"-"+name)
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", "", fmt.Errorf("writing kubeconfig: %w", err)
	}
	return path, "system:serviceaccount:" + saNS + ":" + name, nil
}

// write keeps the reviews of the scenario's user.
func (c *capture) write(s scenario, user string, seen []json.RawMessage) error {
	var keep []json.RawMessage
	for _, raw := range seen {
		var review admissionv1.AdmissionReview
		if err := json.Unmarshal(raw, &review); err != nil {
			return fmt.Errorf("decoding a recorded review: %w", err)
		}
		if review.Request.UserInfo.Username == user {
			keep = append(keep, raw)
		}
	}
	if len(keep) == 0 {
		return fmt.Errorf("no review by %s recorded among %d", user, len(seen))
	}
	for i, raw := range keep {
		name := s.name
		if len(keep) > 1 {
			name += "-" + strconv.Itoa(i+1)
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, raw, "", "  "); err != nil {
			return fmt.Errorf("formatting review: %w", err)
		}
		pretty.WriteByte('\n')
		path := filepath.Join(c.out, name+".json")
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		fmt.Println("wrote", path)
	}
	return nil
}
