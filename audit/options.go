package audit

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DefaultPageSize is how many objects a scan lists per request.
const DefaultPageSize = 500

// DefaultResources are the workload kinds scanned unless a Target names
// others: apps/v1 Deployments, StatefulSets and DaemonSets.
func DefaultResources() []schema.GroupVersionResource {
	return []schema.GroupVersionResource{
		{Group: "apps", Version: "v1", Resource: "deployments"},
		{Group: "apps", Version: "v1", Resource: "statefulsets"},
		{Group: "apps", Version: "v1", Resource: "daemonsets"},
	}
}

// Progress is reported after each page of a scan.
type Progress struct {
	// Resource is the resource being listed.
	Resource schema.GroupVersionResource
	// Objects counts the objects scanned so far, over all resources.
	Objects int
	// Findings counts the findings so far.
	Findings int
}

// Option configures a Scanner.
type Option func(*options)

type options struct {
	pageSize int64
	progress func(Progress)
	cluster  Cluster
	scope    FixScope
	// removalProofs asks the cluster's RemovalProver about each orphan.
	removalProofs bool
}

// WithRemovalProofs makes the scan keep only the orphans whose removal
// sticks, proved by a server-side dry run when the Cluster is a
// RemovalProver (see proofs.go). Default: off, orphans as merge judges
// them; the server (--removal-proofs) and kubectl hygiene audit turn it
// on.
func WithRemovalProofs() Option {
	return func(o *options) { o.removalProofs = true }
}

// WithPageSize sets how many objects one list request asks for (limit;
// the scan follows continue tokens). Default: DefaultPageSize.
func WithPageSize(n int64) Option {
	return func(o *options) { o.pageSize = n }
}

// WithProgress calls report after each page. Default: none.
func WithProgress(report func(Progress)) Option {
	return func(o *options) { o.progress = report }
}
