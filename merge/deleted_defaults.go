package merge

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// WithDeletedDefaults returns result, the object a kubectl apply computed
// from live, with the fields of live that the apply deletes and that the
// API server defaults back to the value live has (isServerDefault, of a
// built-in kind): a
// last-applied that recorded the whole object (kubectl replace or edit
// with --save-config) holds the defaults, and an apply of a manifest
// without them sends their deletion, after which the server stores them
// again. A result computed without them differs from live where the
// stored object does not: when the apply changes nothing else, its write
// changes last-applied alone, which the webhooks review as kubectl apply
// edit-last-applied's hand-over (as WithReplicasDefault). A field goes
// back only into a map that result still has: a struct or list element
// the apply deletes takes its defaults with it. The server's own metadata
// (serverMetadata) goes back too. Inside an atomic struct
// (an env var's fieldRef), which kubectl's patch replaces whole, a key
// the manifest's struct lacks goes back the same way. A DaemonSet keeps
// its deprecated.daemonset.template.generation annotation, which the API
// server sets on every write. result is returned as it is when nothing
// goes back.
func (a *Analyzer) WithDeletedDefaults(live, result *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	d := defaultsBack{kind: live.GetKind(), live: live.Object, result: result}
	// The table of defaults is of the built-in kinds (a custom resource's
	// kind may be named like one).
	if a.scheme.Recognizes(live.GroupVersionKind()) {
		cmp, err := a.compareStored(live, result)
		if err != nil {
			return nil, err
		}
		cmp.Removed.Leaves().Iterate(func(fp fieldpath.Path) { d.keep(Path(fp)) })
		cmp.Modified.Leaves().Iterate(func(fp fieldpath.Path) {
			// A leaf that holds a map is an atomic struct.
			p := Path(fp)
			was, _ := lookup(live.Object, p)
			now, _ := lookup(result.Object, p)
			wm, ok := was.(map[string]any)
			nm, ok2 := now.(map[string]any)
			if !ok || !ok2 {
				return
			}
			for k := range wm {
				if _, has := nm[k]; !has {
					d.keep(p.Append(fieldName(k)))
				}
			}
		})
	}
	metadata, _ := live.Object["metadata"].(map[string]any)
	for _, key := range serverMetadata {
		p := Path{fieldName("metadata"), fieldName(key)}
		if v, ok := metadata[key]; ok {
			if _, has := lookup(result.Object, p); !has {
				d.put(p, v)
			}
		}
	}
	if generation, ok := live.GetAnnotations()[DaemonSetGenerationAnnotation]; ok && live.GetKind() == "DaemonSet" {
		if _, has := result.GetAnnotations()[DaemonSetGenerationAnnotation]; !has {
			d.put(Path{fieldName("metadata"), fieldName("annotations"), fieldName(DaemonSetGenerationAnnotation)}, generation)
		}
	}
	if d.out == nil {
		return result, nil
	}
	return d.out, nil
}

// serverMetadata are the fields of an object's metadata that the API
// server keeps whatever a patch says: a last-applied that recorded the
// whole object has them, and the apply's patch deletes them to no effect.
var serverMetadata = []string{"uid", "creationTimestamp", "resourceVersion", "generation", "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"}

// defaultsBack puts the server's defaults that an apply deletes back
// into a copy of its result, made at the first.
type defaultsBack struct {
	kind   string
	live   map[string]any
	result *unstructured.Unstructured
	out    *unstructured.Unstructured
}

// keep puts live's field at p back when it is what the server defaults it
// to in the result: a default that follows from a sibling (a container's
// imagePullPolicy from its image) follows the result's sibling.
func (d *defaultsBack) keep(p Path) {
	v, ok := lookup(d.live, p)
	if ok && p[len(p)-1].FieldName != nil && !serverManaged(p) && isServerDefault(d.kind, d.result.Object, p, v) {
		d.put(p, v)
	}
}

// put sets the field at p, whose last element is a field name, to v in
// the copy of the result, when the map that holds it is there.
func (d *defaultsBack) put(p Path, v any) {
	if _, ok := lookup(d.result.Object, p[:len(p)-1]); !ok {
		return
	}
	if d.out == nil {
		d.out = d.result.DeepCopy()
	}
	parent, _ := lookup(d.out.Object, p[:len(p)-1])
	if m, ok := parent.(map[string]any); ok {
		m[*p[len(p)-1].FieldName] = runtime.DeepCopyJSONValue(v)
	}
}
