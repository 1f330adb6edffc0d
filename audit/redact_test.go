package audit

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apply-hygiene/apply-hygiene/merge"
)

func TestRedactError(t *testing.T) {
	invalid := apierrors.NewBadRequest(`data[token]: Invalid value: "c2VjcmV0"`)
	for name, tc := range map[string]struct {
		ref  merge.ObjectRef
		err  error
		want string
	}{
		"a Secret's error gives the reason only": {
			ref:  merge.ObjectRef{APIVersion: "v1", Kind: "Secret", Name: "s"},
			err:  invalid,
			want: "writing the Secret: the API server answered BadRequest (its message is not shown: it may quote a value)",
		},
		"a Deployment's error is shown whole": {
			ref:  merge.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "d"},
			err:  apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "deployments"}, "d"),
			want: `deployments.apps "d" not found`,
		},
		"a Secret's other error is not shown": {
			ref:  merge.ObjectRef{APIVersion: "v1", Kind: "Secret", Name: "s"},
			err:  errors.New("c2VjcmV0"),
			want: "writing the Secret failed (the error is not shown: it may quote a value)",
		},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, RedactError(tc.ref, tc.err).Error()); diff != "" {
				t.Errorf("RedactError (-want +got):\n%s", diff)
			}
		})
	}
}
