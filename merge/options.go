package merge

import (
	"k8s.io/apimachinery/pkg/runtime"
)

// Option configures an Analyzer.
type Option func(*options)

type options struct {
	scheme          *runtime.Scheme
	maxValueLength  int
	kubectlManagers map[string]bool
	withoutPruning  bool
	shadowVerify    bool
	schemas         SchemaSource

	lastAppliedCacheSize int
}

// WithScheme sets the scheme that maps a kind to its Go type. Kinds with a
// Go type get a strategic merge patch with patch metadata from that type and
// a typed field set; other kinds get a JSON merge patch and a deduced,
// schema-less field set, as kubectl does for custom resources. Default:
// client-go's scheme (k8s.io/client-go/kubernetes/scheme), kubectl's choice.
func WithScheme(s *runtime.Scheme) Option {
	return func(o *options) { o.scheme = s }
}

// WithMaxValueLength sets the length at which string values in facts are
// cut. 0 keeps them whole. Default: 256 bytes.
func WithMaxValueLength(n int) Option {
	return func(o *options) { o.maxValueLength = n }
}

// WithKubectlManagers adds field managers whose fields count as set by a
// person, like kubectl's own (see IsKubectlManager). Fields owned by any
// other manager are a controller's and are never reported as orphaned.
func WithKubectlManagers(names ...string) Option {
	return func(o *options) {
		for _, n := range names {
			o.kubectlManagers[n] = true
		}
	}
}

// WithShadowVerify makes every analysis (AnalyzeUpdate,
// AnalyzeClientSideApply, Explain and AnalyzeLive) run twice:
// as usual, and once more without the shortcuts that compare only what
// changed (see prune.go) and without the cache of parsed last-applied. When the two differ in any fact, value, owner or
// order, or one fails and the other does not, the call returns an error
// wrapping ErrShadowMismatch. It doubles the cost of an analysis: for test
// runs (end-to-end suites, load tests), not for production. Default: off.
func WithShadowVerify() Option {
	return func(o *options) { o.shadowVerify = true }
}

// WithLastAppliedCacheSize sets how many parsed last-applied annotations
// (the decoded manifest, its typed values and field sets) the Analyzer
// keeps, least recently used first out, so that an annotation seen again
// (old and new of a write, the next write, the next apply's previous
// manifest) is not parsed again. Annotations over 16 KiB are not kept.
// 0 turns the cache off. Default: DefaultLastAppliedCacheSize.
func WithLastAppliedCacheSize(n int) Option {
	return func(o *options) { o.lastAppliedCacheSize = n }
}

// WithSchemas sets where the structural schemas of kinds without a Go type
// come from (see SchemaSource): their field sets then follow the schema,
// so facts inside keyed lists (x-kubernetes-list-type: map) name the
// element, and atomic maps and lists (x-kubernetes-map-type: atomic) are
// one field. Their patch stays kubectl's JSON merge patch. An object that
// does not fit the schema (a manifest with a field the schema lacks) is
// compared, with the other objects of its analysis, by deduced field sets.
// Default: none, every such kind gets deduced field sets.
func WithSchemas(s SchemaSource) Option {
	return func(o *options) { o.schemas = s }
}
