package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Defaults of SchemasOptions.
const (
	DefaultSchemaInterval         = 10 * time.Second
	DefaultSchemaMissWait         = 3 * time.Second
	DefaultSchemaMaxGroupVersions = 128
)

// SchemasOptions configure Schemas.
type SchemasOptions struct {
	// Interval is how often the list of OpenAPI v3 paths is read again to
	// find changed schemas (a CRD updated). Default: DefaultSchemaInterval.
	Interval time.Duration
	// MissWait is how long TypeConverter waits, on the first lookup of a
	// group-version, for Start to read its schema. Default:
	// DefaultSchemaMissWait.
	MissWait time.Duration
	// MaxGroupVersions bounds how many group-versions are kept; lookups
	// of more get no schema. Default: DefaultSchemaMaxGroupVersions.
	MaxGroupVersions int
}

// Schemas are the structural schemas of the kinds that the analyses ask
// for, read from the API server's OpenAPI v3 document of each
// group-version (/openapi/v3/apis/GROUP/VERSION), which every
// authenticated user may read (system:discovery). It hands out their type
// converters (merge.SchemaSource) from memory, and keeps them current while
// Start runs: Start reads the list of paths every Interval and reads the
// document of a group-version again only when its hash changed, so an
// updated CRD is used without a restart. A group-version is read only
// once someone asks for one of its kinds; the first lookup waits up to
// MissWait for it. Schemas is safe for concurrent use.
type Schemas struct {
	client rest.Interface
	opts   SchemasOptions

	mu sync.Mutex
	// gvs are the group-versions asked for, by OpenAPI path
	// ("apis/example.com/v1").
	gvs map[string]*gvSchemas
	// next is the refresh that has not started yet; waiters on a miss
	// wait for it to end.
	next *refresh
	// wake asks Start for a refresh now.
	wake chan struct{}
}

// gvSchemas is one group-version's converter: nil until read, or when the
// server has no document for it.
type gvSchemas struct {
	url   string // serverRelativeURL, with the document's hash
	tc    managedfields.TypeConverter
	kinds map[string]bool
	// checked is when a refresh last looked for it; missed, when a lookup
	// last waited for it in vain.
	checked, missed time.Time
}

type refresh struct{ done chan struct{} }

// NewSchemas returns Schemas that read from client, a REST client of the
// API server's root (a discovery client's RESTClient()).
func NewSchemas(client rest.Interface, opts SchemasOptions) *Schemas {
	if opts.Interval <= 0 {
		opts.Interval = DefaultSchemaInterval
	}
	if opts.MissWait <= 0 {
		opts.MissWait = DefaultSchemaMissWait
	}
	if opts.MaxGroupVersions <= 0 {
		opts.MaxGroupVersions = DefaultSchemaMaxGroupVersions
	}
	return &Schemas{client: client, opts: opts, gvs: map[string]*gvSchemas{},
		next: &refresh{done: make(chan struct{})}, wake: make(chan struct{}, 1)}
}

// gvPath is the OpenAPI v3 path of gvk's group-version.
func gvPath(gvk schema.GroupVersionKind) string {
	if gvk.Group == "" {
		return "api/" + gvk.Version
	}
	return "apis/" + gvk.Group + "/" + gvk.Version
}

// TypeConverter returns the type converter of gvk's group-version, which
// knows gvk, from memory. On a miss it asks Start for a refresh and waits
// up to MissWait for it, once per Interval and group-version: a kind the
// server has no schema for (an aggregated API without OpenAPI v3) costs one
// wait, not one per lookup.
func (s *Schemas) TypeConverter(gvk schema.GroupVersionKind) (managedfields.TypeConverter, bool) {
	path := gvPath(gvk)
	s.mu.Lock()
	e, ok := s.gvs[path]
	switch {
	case ok && e.kinds[gvk.Kind]:
		tc := e.tc // read under the lock: Refresh replaces it
		s.mu.Unlock()
		return tc, true
	case !ok && len(s.gvs) >= s.opts.MaxGroupVersions:
		s.mu.Unlock()
		return nil, false
	case !ok:
		e = &gvSchemas{}
		s.gvs[path] = e
	}
	now := time.Now()
	if now.Sub(e.checked) < s.opts.Interval && e.checked.After(e.missed) || now.Sub(e.missed) < s.opts.Interval {
		// Looked for, or waited for, within Interval: not there.
		s.mu.Unlock()
		return nil, false
	}
	next := s.next
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	timer := time.NewTimer(s.opts.MissWait)
	defer timer.Stop()
	select {
	case <-next.done:
	case <-timer.C:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.kinds[gvk.Kind] {
		return e.tc, true
	}
	e.missed = time.Now()
	return nil, false
}

// Start keeps the schemas current until ctx ends: it refreshes every
// Interval and at once when a lookup misses. A failed refresh is logged
// and tried again at the next one.
func (s *Schemas) Start(ctx context.Context) error {
	ticker := time.NewTicker(s.opts.Interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		case <-s.wake:
		}
		if err := s.Refresh(ctx); err != nil && ctx.Err() == nil {
			log.FromContext(ctx).Error(err, "reading OpenAPI v3 schemas")
		}
	}
}

// NeedLeaderElection is false: every replica serves reviews and needs the
// schemas.
func (s *Schemas) NeedLeaderElection() bool { return false }

// Refresh reads the list of OpenAPI v3 paths, and the document of every
// group-version asked for whose hash changed since it was read; before
// the first lookup it reads nothing. Lookups
// that wait for a refresh are answered when it ends, also when it fails.
func (s *Schemas) Refresh(ctx context.Context) error {
	s.mu.Lock()
	current := s.next
	s.next = &refresh{done: make(chan struct{})}
	wanted := make(map[string]string, len(s.gvs))
	for path, e := range s.gvs {
		wanted[path] = e.url
	}
	s.mu.Unlock()
	defer close(current.done)
	if len(wanted) == 0 {
		return nil // nobody asked for a schema yet: nothing to read
	}
	urls, err := s.paths(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for path, had := range wanted {
		url := urls[path]
		if url == had && url != "" {
			s.update(path, func(e *gvSchemas) { e.checked = time.Now() })
			continue
		}
		var tc managedfields.TypeConverter
		var kinds map[string]bool
		if url != "" {
			if tc, kinds, err = s.read(ctx, url); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		s.update(path, func(e *gvSchemas) { e.url, e.tc, e.kinds, e.checked = url, tc, kinds, time.Now() })
	}
	return errors.Join(errs...)
}

func (s *Schemas) update(path string, f func(*gvSchemas)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.gvs[path]; ok {
		f(e)
	}
}

// paths reads the list of OpenAPI v3 paths: path → serverRelativeURL.
func (s *Schemas) paths(ctx context.Context) (map[string]string, error) {
	data, err := s.client.Get().AbsPath("/openapi/v3").SetHeader("Accept", "application/json").Do(ctx).Raw()
	if err != nil {
		return nil, fmt.Errorf("reading the OpenAPI v3 paths: %w", err)
	}
	var doc struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("decoding the OpenAPI v3 paths: %w", err)
	}
	out := make(map[string]string, len(doc.Paths))
	for path, p := range doc.Paths {
		out[path] = p.ServerRelativeURL
	}
	return out, nil
}

// read reads one group-version's document and builds its type converter
// and the set of kinds it has.
func (s *Schemas) read(ctx context.Context, url string) (managedfields.TypeConverter, map[string]bool, error) {
	data, err := s.client.Get().RequestURI(url).SetHeader("Accept", "application/json").Do(ctx).Raw()
	if err != nil {
		return nil, nil, fmt.Errorf("reading OpenAPI v3 document %s: %w", url, err)
	}
	return typeConverterOf(data, url)
}

// typeConverterOf builds the type converter of an OpenAPI v3 document.
func typeConverterOf(data []byte, url string) (managedfields.TypeConverter, map[string]bool, error) {
	var doc struct {
		Components struct {
			Schemas map[string]*spec.Schema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("decoding OpenAPI v3 document %s: %w", url, err)
	}
	kinds := map[string]bool{}
	for _, sc := range doc.Components.Schemas {
		if sc == nil {
			continue
		}
		gvks, _ := sc.Extensions["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			if m, ok := g.(map[string]any); ok {
				if k, ok := m["kind"].(string); ok {
					kinds[k] = true
				}
			}
		}
	}
	tc, err := managedfields.NewTypeConverter(doc.Components.Schemas, false)
	if err != nil {
		return nil, nil, fmt.Errorf("building the type converter of %s: %w", url, err)
	}
	return tc, kinds, nil
}
