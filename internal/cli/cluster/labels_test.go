package cluster_test

import (
	"maps"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/cluster"
)

// TestRememberingNamespaceLabelsReadsEachNamespaceOnce: a command's run
// asks the API server once per namespace, a missing one included, and a
// caller that changes the labels it got does not change what the next
// caller gets; without memory every call reads.
func TestRememberingNamespaceLabelsReadsEachNamespaceOnce(t *testing.T) {
	shop := map[string]string{"kubernetes.io/metadata.name": "shop", "team": "a"}
	for name, tc := range map[string]struct {
		remember bool
		wantGets int
	}{
		"remembering": {remember: true, wantGets: 2},
		"plain":       {remember: false, wantGets: 6},
	} {
		t.Run(name, func(t *testing.T) {
			ns := object(namespaces, "Namespace", "", shop)
			ns.SetName("shop")
			client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
				map[schema.GroupVersionResource]string{namespaces: "NamespaceList"}, ns)
			c := cluster.New(client, meta.NewDefaultRESTMapper(nil))
			if tc.remember {
				c = c.RememberingNamespaceLabels()
			}
			for range 3 {
				got := c.NamespaceLabels(t.Context(), "shop")
				if !maps.Equal(got, shop) {
					t.Fatalf("NamespaceLabels(shop) = %v, want %v", got, shop)
				}
				got["team"] = "changed by a caller"
				if got := c.NamespaceLabels(t.Context(), "gone"); len(got) != 0 {
					t.Fatalf("NamespaceLabels(gone) = %v, want none", got)
				}
			}
			if gets := len(client.Actions()); gets != tc.wantGets {
				t.Errorf("%d reads of the API server, want %d: %v", gets, tc.wantGets, client.Actions())
			}
		})
	}
}
