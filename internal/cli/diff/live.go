package diff

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/cluster"
	"github.com/apply-hygiene/apply-hygiene/policy"
)

// liveObjects returns the live objects the manifests would be applied to:
// those of --live, or else each manifest's object read from the cluster,
// as kubectl diff does. A manifest without a namespace gets the namespace
// of -n or of the kubeconfig context (set in place, as kubectl apply
// sends it); one with another namespace than an explicit -n is an error,
// as for kubectl. An object that does not exist is left out: apply would
// create it.
func (o *Options) liveObjects(ctx context.Context, manifests []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	if o.LiveFile != "" {
		return cli.ReadObjects(o.LiveFile, o.In)
	}
	ns, err := cli.NamespaceOf(o.kube.ConfigFlags)
	if err != nil {
		return nil, cli.BadInput(err)
	}
	explicit := o.kube.Namespace != nil && *o.kube.Namespace != ""
	c, err := o.kube.Connect()
	if err != nil {
		return nil, err
	}
	var live []*unstructured.Unstructured
	for _, m := range manifests {
		obj, err := getManifestObject(ctx, c, m, ns, explicit)
		if err != nil {
			return nil, err
		}
		if obj != nil {
			live = append(live, obj)
		}
	}
	return live, nil
}

// getManifestObject reads the live object of the manifest m, nil when it
// does not exist, setting m's namespace to ns when it is namespaced and has
// none.
func getManifestObject(ctx context.Context, c *cluster.Cluster, m *unstructured.Unstructured, ns string, explicit bool) (*unstructured.Unstructured, error) {
	gvk := m.GroupVersionKind()
	what := fmt.Sprintf("%s %s", m.GetKind(), m.GetName())
	mapping, err := c.Mapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return nil, cli.BadInput(fmt.Errorf("%s: the cluster has no resource for %s: %w", what, gvk, err))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: resolving %s: %w", what, gvk, err)
	}
	ri := c.Dynamic().Resource(mapping.Resource)
	var obj *unstructured.Unstructured
	if cli.Namespaced(mapping) {
		switch {
		case m.GetNamespace() == "":
			m.SetNamespace(ns)
		case explicit && m.GetNamespace() != ns:
			return nil, cli.BadInput(fmt.Errorf("%s: the namespace of the manifest (%s) does not match --namespace %s", what, m.GetNamespace(), ns))
		}
		obj, err = ri.Namespace(m.GetNamespace()).Get(ctx, m.GetName(), metav1.GetOptions{})
	} else {
		obj, err = ri.Get(ctx, m.GetName(), metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", objectPath(m), err)
	}
	return obj, nil
}

func objectPath(m *unstructured.Unstructured) string {
	name := strings.ToLower(m.GetKind()) + "/" + m.GetName()
	if m.GetNamespace() != "" {
		return name + " in namespace " + m.GetNamespace()
	}
	return name
}

// exitError is diff's exit status for errors other than bad input:
// like kubectl diff, diff keeps 1 for its answer ("apply would be denied")
// and exits with more than 1 when it fails.
const exitError = 3

// withExitStatus gives err, when it has no exit status of its own, diff's status
// for errors.
func withExitStatus(err error) error {
	var e *cli.ExitError
	if err == nil || errors.As(err, &e) {
		return err
	}
	return &cli.ExitError{Code: exitError, Err: err}
}

// outcome is the error that sets diff's exit status: 1 when any
// finding's action is deny, as kubectl diff exits 1 when it finds
// differences; nil otherwise.
func outcome(actions []string) error {
	denied := 0
	for _, a := range actions {
		if a == string(policy.ActionDeny) {
			denied++
		}
	}
	if denied == 0 {
		return nil
	}
	return &cli.ExitError{Code: cli.ExitFailure, Err: errors.New(cli.Plural(denied, "finding") + " with the action deny: kubectl apply would be denied")}
}
