package kube_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/apply-hygiene/apply-hygiene/internal/kube"
)

// ExampleSchemas reads the schema of a custom resource from an API
// server's OpenAPI v3 (here a test server with the document kube-apiserver
// serves for the Route CRD) and converts a Route with it: spec.routes is a
// list-map, so its field set names the element.
func ExampleSchemas() {
	doc, err := os.ReadFile("testdata/route-v1.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/openapi/v3" {
			_, _ = w.Write([]byte(`{"paths":{"apis/example.com/v1":{"serverRelativeURL":"/openapi/v3/apis/example.com/v1?hash=1"}}}`))
			return
		}
		_, _ = w.Write(doc)
	}))
	defer srv.Close()
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	schemas := kube.NewSchemas(dc.RESTClient(), kube.SchemasOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = schemas.Start(ctx) }()

	route := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Route"}
	tc, ok := schemas.TypeConverter(route)
	if !ok {
		fmt.Println("no schema for", route)
		return
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"routes": []any{map[string]any{"name": "canary", "weight": int64(10)}},
	}}}
	obj.SetGroupVersionKind(route)
	tv, err := tc.ObjectToTyped(obj)
	if err != nil {
		fmt.Println(err)
		return
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(set.Leaves().String())
	// Output:
	// .apiVersion
	// .kind
	// .spec.routes[name="canary"].name
	// .spec.routes[name="canary"].weight
}
