package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestAuditResources(t *testing.T) {
	tests := []struct {
		name    string
		in      []string
		want    []schema.GroupVersionResource
		wantErr string
	}{
		{name: "none: the audit's default", in: nil, want: nil},
		{name: "a group and the core group", in: []string{"apps/v1/deployments", "v1/configmaps", "rbac.authorization.k8s.io/v1/clusterroles"},
			want: []schema.GroupVersionResource{
				{Group: "apps", Version: "v1", Resource: "deployments"},
				{Version: "v1", Resource: "configmaps"},
				{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
			}},
		{name: "a resource alone", in: []string{"configmaps"},
			wantErr: `--audit-resources: "configmaps" is not group/version/resource (or version/resource for the core group)`},
		{name: "a subresource", in: []string{"apps/v1/deployments/scale"},
			wantErr: `--audit-resources: "apps/v1/deployments/scale" is not group/version/resource (or version/resource for the core group)`},
		{name: "an empty part", in: []string{"apps//deployments"}, wantErr: `--audit-resources: "apps//deployments" has an empty part`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := auditResources(tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
