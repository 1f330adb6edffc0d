package reports_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	v1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

var (
	reportsGVR        = schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "reports"}
	clusterReportsGVR = schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "clusterreports"}
)

// report reads the namespace's Report apply-hygiene, or with namespace ""
// the ClusterReport (the same fields); nil while there is none.
func report(ctx context.Context, t *testing.T, namespace string) (*v1alpha1.Report, error) {
	t.Helper()
	cfg, err := framework.ControlPlane(t).RESTConfig()
	if err != nil {
		return nil, err
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	var target dynamic.ResourceInterface = client.Resource(clusterReportsGVR)
	if namespace != "" {
		target = client.Resource(reportsGVR).Namespace(namespace)
	}
	u, err := target.Get(ctx, "apply-hygiene", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r v1alpha1.Report
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// logLine is a line of the server's JSON log.
type logLine map[string]any

// serverLog reads the (first) server's log lines whose msg is msg.
func serverLog(t *testing.T, msg string) []logLine {
	t.Helper()
	file, err := os.Open(framework.Webhook(t).LogPath)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var out []logLine
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line logLine
		if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == msg {
			out = append(out, line)
		}
	}
	return out
}

// hasLine reports whether text has the line.
func hasLine(text, line string) bool {
	for l := range strings.SplitSeq(text, "\n") {
		if l == line {
			return true
		}
	}
	return false
}
