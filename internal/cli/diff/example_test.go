package diff_test

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/cluster"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/diff"
	"github.com/apply-hygiene/apply-hygiene/merge"
)

func ExampleNewCmd() {
	analyzer := sync.OnceValue(func() *merge.Analyzer { return merge.NewAnalyzer() })
	offline := func(*genericclioptions.ConfigFlags) (*cluster.Cluster, error) { return nil, errors.New("offline") }

	var out, errOut bytes.Buffer
	cmd := diff.NewCmd(genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, analyzer, offline)
	cmd.SetArgs([]string{"-f", "testdata/multi/manifest.yaml", "--live", "testdata/multi/live.yaml"})
	if err := cmd.Execute(); err != nil {
		fmt.Println(err)
	}
	fmt.Print(out.String())
	// Output:
	// Deployment default/nginx-deployment: strategicMergePatch
	//   metadata:
	//     annotations:
	//       kubectl.kubernetes.io/last-applied-configuration: |
	//         {"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"nginx-deployment","namespace":"default"},"spec":{"selector":{"matchLabels":{"app":"nginx"}},"template":{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"image":"nginx:1.19","name":"nginx","ports":[{"containerPort":80}]}]}}}}
	//   spec:
	//     template:
	//       spec:
	//         $setElementOrder/containers:
	//         - name: nginx
	//         containers:
	//         - image: nginx:1.19
	//           name: nginx
	// ConfigMap settings: would be created
	// WARN: [orphaned-field] Deployment default/nginx-deployment: spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt] ("2022-07-26T11:44:32+08:00", set by kubectl-rollout at 2022-07-26T03:44:32Z) is in neither your manifest nor last-applied, so kubectl apply will never remove it. Removing it changes the pod template, so it rolls the pods (a new rollout starts). Remove it with: kubectl patch deployments.apps/nginx-deployment -n default --type=json -p '[{"op":"test","path":"/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt","value":"2022-07-26T11:44:32+08:00"},{"op":"remove","path":"/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt"}]'
}
