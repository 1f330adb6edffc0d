package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
	"github.com/apply-hygiene/apply-hygiene/webhook"
)

// namespaceCacheTTL is the server's --namespace-cache-ttl default.
const namespaceCacheTTL = 10 * time.Second

// startHygiene starts apply-hygiene in this process as cmd/apply-hygiene
// wires it with its default flags: the default policies, the analyzer,
// metrics, failure policy Ignore, on controller-runtime's webhook server.
// Its Cluster is the server's own (internal/kube) on client-go's in-memory
// dynamic client, holding the reviews' captured objects (<review>.cluster
// .json) and namespaces: the API server is the only thing left out. It
// serves until ctx ends; done is closed when it has stopped.
func startHygiene(ctx context.Context, certs *selfSigned, reviews []review, shadowVerify bool) (url string, done <-chan error, err error) {
	engine, err := policy.New(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("loading policies: %w", err)
	}
	metrics, err := webhook.NewMetrics(prometheus.NewRegistry(), engine.Status)
	if err != nil {
		return "", nil, err
	}
	cluster, err := capturedCluster(reviews)
	if err != nil {
		return "", nil, err
	}
	analyzerOpts := []merge.Option{merge.WithKubectlManagers()}
	if shadowVerify {
		analyzerOpts = append(analyzerOpts, merge.WithShadowVerify())
	}
	reviewer := webhook.NewReviewer(engine, cluster, webhook.WithAnalyzer(merge.NewAnalyzer(analyzerOpts...)),
		webhook.WithFailOpen(true), webhook.WithMetrics(metrics))
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	server := crwebhook.NewServer(crwebhook.Options{Host: "127.0.0.1", Port: port, TLSOpts: []func(*tls.Config){certs.serverTLS}})
	for path, handler := range reviewer.Handlers() {
		server.Register(path, handler)
	}
	errc := make(chan error, 1)
	go func() { errc <- server.Start(ctx) }()
	if err := waitListening(ctx, port, certs.caPEM, errc); err != nil {
		return "", nil, err
	}
	return fmt.Sprintf("https://127.0.0.1:%d/validate", port), errc, nil
}

// capturedCluster is a kube.Cluster on an in-memory dynamic client with
// the objects captured with each review and the reviews' namespaces.
func capturedCluster(reviews []review) (*kube.Cluster, error) {
	var objects []runtime.Object
	namespaces := map[string]bool{}
	for _, r := range reviews {
		if r.namespace != "" && !namespaces[r.namespace] {
			namespaces[r.namespace] = true
			objects = append(objects, &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "Namespace",
				"metadata": map[string]any{"name": r.namespace, "labels": map[string]any{corev1.LabelMetadataName: r.namespace}},
			}})
		}
		raw, err := os.ReadFile(strings.TrimSuffix(r.path, ".json") + ".cluster.json")
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading the cluster of %s: %w", r.name, err)
		}
		list := &unstructured.UnstructuredList{}
		if err := list.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("decoding the cluster of %s: %w", r.name, err)
		}
		for i := range list.Items {
			objects = append(objects, &list.Items[i])
		}
	}
	listKinds := map[schema.GroupVersionResource]string{
		{Version: "v1", Resource: "namespaces"}:                         "NamespaceList",
		{Group: "apps", Version: "v1", Resource: "replicasets"}:         "ReplicaSetList",
		{Group: "apps", Version: "v1", Resource: "controllerrevisions"}: "ControllerRevisionList",
		{Group: "apps", Version: "v1", Resource: "deployments"}:         "DeploymentList",
		{Group: "apps", Version: "v1", Resource: "statefulsets"}:        "StatefulSetList",
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, objects...)
	return kube.NewCluster(client, namespaceCacheTTL), nil
}

// freePort returns a loopback port nobody listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitListening waits until port completes a TLS handshake with a
// certificate of caPEM, or the server behind it has stopped.
func waitListening(ctx context.Context, port int, caPEM []byte, stopped <-chan error) error {
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	dialer := &tls.Dialer{NetDialer: &net.Dialer{Timeout: time.Second}, Config: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	for {
		conn, err := dialer.DialContext(ctx, "tcp", addr)
		if err == nil {
			return conn.Close()
		}
		select {
		case err := <-stopped:
			return fmt.Errorf("starting the server on %s: %w", addr, err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
