package migrate

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/internal/cli"
)

// target is one object to migrate and its resource.
type target struct {
	obj *unstructured.Unstructured
	gvr schema.GroupVersionResource
	// saved: the object is a document kubectl get -o yaml saved (-f),
	// written only at its resourceVersion.
	saved bool
}

// objects returns the objects that the arguments name, those of -f, or
// else every object of the listed kinds in the namespace.
func (o *Options) objects(ctx context.Context, c *Cluster) ([]target, error) {
	if len(o.Objects) == 0 && len(o.Files) == 0 {
		return o.list(ctx, c)
	}
	var out []target
	for _, n := range o.Objects {
		gvr, namespaced, err := c.resource(n.Kind)
		if err != nil {
			return nil, err
		}
		obj, err := c.read(ctx, gvr, namespaced, o.Namespace, n.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, target{obj: obj, gvr: gvr})
	}
	for _, f := range o.Files {
		docs, err := cli.ReadObjects(f, o.In)
		if err != nil {
			return nil, err
		}
		for _, doc := range docs {
			t, err := o.fromFile(ctx, c, doc)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// fromFile returns the live object that a document of -f names. When
// `kubectl get -o yaml` saved the document (it has a resourceVersion), the
// saved resourceVersion guards every write: an object that changed since
// it was saved is not written.
func (o *Options) fromFile(ctx context.Context, c *Cluster, doc *unstructured.Unstructured) (target, error) {
	gvk := doc.GroupVersionKind()
	mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return target{}, cli.BadInput(fmt.Errorf("resolving %s %s: %w", gvk.Kind, doc.GetName(), err))
	}
	ns := doc.GetNamespace()
	if ns == "" {
		ns = o.Namespace
	}
	obj, err := c.read(ctx, mapping.Resource, cli.Namespaced(mapping), ns, doc.GetName())
	if err != nil {
		return target{}, err
	}
	rv := doc.GetResourceVersion()
	if rv != "" {
		// kubectl get -o yaml leaves managedFields out: plan from the
		// live object, but write only if it is still the saved version.
		obj.SetResourceVersion(rv)
	}
	return target{obj: obj, gvr: mapping.Resource, saved: rv != ""}, nil
}

// list lists the default workloads and --kind, page by page.
func (o *Options) list(ctx context.Context, c *Cluster) ([]target, error) {
	resources, err := cli.WithKinds(c.mapper, audit.DefaultResources(), o.Kinds)
	if err != nil {
		return nil, err
	}
	var out []target
	for _, gvr := range resources {
		var lister dynamic.ResourceInterface = c.dynamic.Resource(gvr)
		if o.Namespace != "" {
			lister = c.dynamic.Resource(gvr).Namespace(o.Namespace)
		}
		opts := metav1.ListOptions{Limit: audit.DefaultPageSize}
		for {
			list, err := lister.List(ctx, opts)
			if err != nil {
				return nil, fmt.Errorf("listing %s: %w", gvr.GroupResource(), err)
			}
			for i := range list.Items {
				out = append(out, target{obj: &list.Items[i], gvr: gvr})
			}
			if opts.Continue = list.GetContinue(); opts.Continue == "" {
				break
			}
		}
	}
	return out, nil
}

// read gets one object of gvr.
func (c *Cluster) read(ctx context.Context, gvr schema.GroupVersionResource, namespaced bool, namespace, name string) (*unstructured.Unstructured, error) {
	obj, err := c.client(gvr, namespaced, namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", gvr.GroupResource(), name, err)
	}
	return obj, nil
}

// client is the dynamic client of gvr, in namespace when it is namespaced.
func (c *Cluster) client(gvr schema.GroupVersionResource, namespaced bool, namespace string) dynamic.ResourceInterface {
	if namespaced {
		return c.dynamic.Resource(gvr).Namespace(namespace)
	}
	return c.dynamic.Resource(gvr)
}
