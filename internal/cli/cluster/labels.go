package cluster

import (
	"context"
	"maps"
	"sync"
)

// namespaceLabelsRead is one read of a namespace's labels: the labels,
// and whether they could be read.
type namespaceLabelsRead struct {
	labels map[string]string
	ok     bool
}

// labelMemo remembers each namespace's labels once read, for one
// command's run.
type labelMemo struct {
	mu   sync.Mutex
	read map[string]namespaceLabelsRead
}

// RememberingNamespaceLabels returns a copy of c that reads each
// namespace's labels once and then answers from memory: for one run of a
// command that judges many objects (diff, explain), so that the
// enforcement label and the webhooks' namespaceSelector see the same
// labels for every object of a namespace and the API server is asked
// once per namespace, not twice per object. Not for the audit, whose
// runs outlast a change of labels.
func (c *Cluster) RememberingNamespaceLabels() *Cluster {
	cp := *c
	cp.labels = &labelMemo{read: map[string]namespaceLabelsRead{}}
	return &cp
}

// remembered returns the labels of namespace name from m, reading them
// with read the first time; callers get their own copy of the map.
func (m *labelMemo) remembered(ctx context.Context, name string, read func(context.Context, string) (map[string]string, bool)) (map[string]string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, seen := m.read[name]
	if !seen {
		r.labels, r.ok = read(ctx, name)
		m.read[name] = r
	}
	return maps.Clone(r.labels), r.ok
}
