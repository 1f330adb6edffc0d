package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestWithKinds(t *testing.T) {
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	cronjobs := schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "CronJob"}, meta.RESTScopeNamespace)
	tests := map[string]struct {
		kinds   []string
		want    []schema.GroupVersionResource
		wantErr string
	}{
		"no --kind":                 {want: []schema.GroupVersionResource{deployments}},
		"a new kind is appended":    {kinds: []string{" cronjobs "}, want: []schema.GroupVersionResource{deployments, cronjobs}},
		"a kind already there once": {kinds: []string{"deployments.apps", "cronjobs", "cronjob"}, want: []schema.GroupVersionResource{deployments, cronjobs}},
		"an unknown kind":           {kinds: []string{"widgets"}, wantErr: `unknown kind "widgets"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := WithKinds(mapper, []schema.GroupVersionResource{deployments}, tc.kinds)
			if tc.wantErr != "" {
				if err == nil || Code(err) != ExitBadInput || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("error %v (exit %d), want bad input starting %q", err, Code(err), tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("resources (-want +got):\n%s", diff)
			}
		})
	}
}
