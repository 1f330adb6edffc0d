package kube

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

var routeGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Route"}

// openAPIServer serves /openapi/v3 with one group-version, example.com/v1,
// whose document (testdata/route-v1.json, route-v2.json: what
// kube-apiserver 1.37 serves for the CRD of test/e2e/crd/testdata/crd.yaml
// and crd-v2.yaml) and hash the test can change. It counts the requests
// per path.
type openAPIServer struct {
	mu       sync.Mutex
	doc      []byte
	hash     string
	requests map[string]*atomic.Int64
}

func newOpenAPIServer(t *testing.T, file, hash string) (*openAPIServer, rest.Interface) {
	t.Helper()
	s := &openAPIServer{requests: map[string]*atomic.Int64{"/openapi/v3": {}, "/openapi/v3/apis/example.com/v1": {}}}
	s.serve(t, file, hash)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, ok := s.requests[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		n.Add(1)
		s.mu.Lock()
		defer s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/openapi/v3" {
			_, _ = w.Write([]byte(`{"paths":{"apis/example.com/v1":{"serverRelativeURL":"/openapi/v3/apis/example.com/v1?hash=` + s.hash + `"}}}`))
			return
		}
		_, _ = w.Write(s.doc)
	}))
	t.Cleanup(srv.Close)
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return s, dc.RESTClient()
}

// serve makes the server serve file under hash.
func (s *openAPIServer) serve(t *testing.T, file, hash string) {
	t.Helper()
	data, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.doc, s.hash = data, hash
}

// fieldsOf converts a Route with the converter of schemas and returns its
// field set in kubectl's notation.
func fieldsOf(t *testing.T, s *Schemas, spec map[string]any) []string {
	t.Helper()
	tc, ok := s.TypeConverter(routeGVK)
	if !ok {
		t.Fatal("no type converter for Route")
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	obj.SetGroupVersionKind(routeGVK)
	tv, err := tc.ObjectToTyped(obj)
	if err != nil {
		t.Fatalf("converting a Route: %v", err)
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	set.Leaves().Iterate(func(p fieldpath.Path) { out = append(out, p.String()) })
	return out
}

// TestSchemasFollowTheServer checks that the first lookup waits for the
// schema, that the list-map spec.routes has one field per element, and
// that a changed document (a new hash) is read again at the next refresh,
// an unchanged one not.
func TestSchemasFollowTheServer(t *testing.T) {
	srv, client := newOpenAPIServer(t, "route-v1.json", "one")
	s := NewSchemas(client, SchemasOptions{Interval: time.Hour, MissWait: 30 * time.Second})
	ctx := t.Context()
	go func() { _ = s.Start(ctx) }()

	routes := []any{map[string]any{"name": "canary", "weight": int64(1)}}
	got := fieldsOf(t, s, map[string]any{"routes": routes, "selector": map[string]any{"a": "b"}})
	want := []string{".apiVersion", ".kind", ".spec.selector", `.spec.routes[name="canary"].name`, `.spec.routes[name="canary"].weight`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fields with v1 (-want +got):\n%s", diff)
	}
	if err := s.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n := srv.requests["/openapi/v3/apis/example.com/v1"].Load(); n != 1 {
		t.Errorf("the unchanged document was read %d times, want 1", n)
	}

	srv.serve(t, "route-v2.json", "two")
	if err := s.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	got = fieldsOf(t, s, map[string]any{"mirrors": []any{map[string]any{"name": "m"}}})
	if diff := cmp.Diff([]string{".apiVersion", ".kind", `.spec.mirrors[name="m"].name`}, got); diff != "" {
		t.Errorf("fields with v2 (-want +got):\n%s", diff)
	}
	if n := srv.requests["/openapi/v3/apis/example.com/v1"].Load(); n != 2 {
		t.Errorf("the document was read %d times after its hash changed, want 2", n)
	}
}

// TestSchemasMiss checks that a kind the server has no schema for costs one
// refresh and one wait, not one per lookup, and that lookups stop adding
// group-versions at MaxGroupVersions.
func TestSchemasMiss(t *testing.T) {
	srv, client := newOpenAPIServer(t, "route-v1.json", "one")
	s := NewSchemas(client, SchemasOptions{Interval: time.Hour, MissWait: 30 * time.Second, MaxGroupVersions: 2})
	go func() { _ = s.Start(t.Context()) }()

	unknown := schema.GroupVersionKind{Group: "other.example.com", Version: "v1", Kind: "Thing"}
	for range 3 {
		if _, ok := s.TypeConverter(unknown); ok {
			t.Fatal("a type converter for a group-version the server does not have")
		}
	}
	if n := srv.requests["/openapi/v3"].Load(); n != 1 {
		t.Errorf("three misses read the paths %d times, want 1", n)
	}
	if _, ok := s.TypeConverter(routeGVK); !ok {
		t.Error("no type converter for Route")
	}
	third := schema.GroupVersionKind{Group: "third.example.com", Version: "v1", Kind: "Thing"}
	start := time.Now()
	if _, ok := s.TypeConverter(third); ok || time.Since(start) > time.Second {
		t.Errorf("a third group-version over MaxGroupVersions 2: ok %v after %v, want false at once", ok, time.Since(start))
	}
}

// TestSchemasConcurrent looks kinds up from many goroutines while the
// document changes and refreshes run (go test -race).
func TestSchemasConcurrent(t *testing.T) {
	srv, client := newOpenAPIServer(t, "route-v1.json", "one")
	s := NewSchemas(client, SchemasOptions{Interval: time.Millisecond, MissWait: 30 * time.Second})
	go func() { _ = s.Start(t.Context()) }()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				if i == 0 && j%10 == 0 {
					srv.serve(t, []string{"route-v1.json", "route-v2.json"}[j/10%2], string(rune('a'+j/10)))
				}
				if tc, ok := s.TypeConverter(routeGVK); ok {
					obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"host": "h"}}}
					obj.SetGroupVersionKind(routeGVK)
					if _, err := tc.ObjectToTyped(obj); err != nil {
						t.Errorf("converting a Route: %v", err)
					}
				}
				s.TypeConverter(schema.GroupVersionKind{Group: "x.example.com", Version: "v1", Kind: "X"})
			}
		}()
	}
	wg.Wait()
}

// TestSchemasLookupWhileRefreshing looks a kind up in tight loops while
// refreshes replace its converter (a new document hash each time), so
// that lookups and replacements meet on every refresh (go test -race):
// TypeConverter once read a hit's converter after releasing the lock
// (CI's race run caught it in TestSchemasConcurrent about one run in 30).
func TestSchemasLookupWhileRefreshing(t *testing.T) {
	srv, client := newOpenAPIServer(t, "route-v1.json", "0")
	s := NewSchemas(client, SchemasOptions{Interval: time.Hour, MissWait: time.Millisecond})
	s.TypeConverter(routeGVK) // asks for example.com/v1: no refresh runs, so a miss
	if err := s.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if tc, ok := s.TypeConverter(routeGVK); !ok || tc == nil {
					t.Error("no type converter for Route while refreshing")
					return
				}
			}
		})
	}
	for i := range 20 {
		srv.serve(t, []string{"route-v2.json", "route-v1.json"}[i%2], strconv.Itoa(i+1))
		if err := s.Refresh(t.Context()); err != nil {
			t.Error(err)
			break
		}
	}
	close(stop)
	wg.Wait()
}
