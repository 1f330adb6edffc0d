package cli

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A word copied from a message's command into cmd.exe keeps the single
// quotes around it; KindAndName and the paths take it as bash would.
// Anything not quoted exactly so is left as it is.
func TestUnquoteWord(t *testing.T) {
	tests := map[string]struct {
		arg  string
		want string
	}{
		"a path as bash passes it":                     {arg: "spec.template.spec.containers[name=web].image", want: "spec.template.spec.containers[name=web].image"},
		"a path as cmd.exe passes it":                  {arg: "'spec.template.spec.containers[name=web].image'", want: "spec.template.spec.containers[name=web].image"},
		"a quote inside, escaped as the messages do":   {arg: `'env[name=IT'\''S]'`, want: "env[name=IT'S]"},
		"two escaped quotes in a row":                  {arg: `'a'\'''\''b'`, want: "a''b"},
		"a quoted object name":                         {arg: "'clusterroles.rbac.authorization.k8s.io/system:aggregate-to-edit'", want: "clusterroles.rbac.authorization.k8s.io/system:aggregate-to-edit"},
		"the empty word":                               {arg: "''", want: ""},
		"a quote alone":                                {arg: "'", want: "'"},
		"an opening quote alone":                       {arg: "'spec.replicas", want: "'spec.replicas"},
		"a quote inside not escaped":                   {arg: "'it's'", want: "'it's'"},
		"two quoted words":                             {arg: "'a' 'b'", want: "'a' 'b'"},
		"a backslash escape that is not the messages'": {arg: `'it\'s'`, want: `'it\'s'`},
		"double quotes are not taken off":              {arg: `"spec.replicas"`, want: `"spec.replicas"`},
		"quotes inside a word are kept":                {arg: `metadata.annotations['x']`, want: `metadata.annotations['x']`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, UnquoteWord(tc.arg)); diff != "" {
				t.Errorf("UnquoteWord(%q) (-want +got):\n%s", tc.arg, diff)
			}
		})
	}
}

func TestKindAndName(t *testing.T) {
	type result struct{ Kind, Name, Err string }
	tests := map[string]struct {
		args []string
		want result
	}{
		"KIND/NAME":                      {args: []string{"deployments.apps/web"}, want: result{Kind: "deployments.apps", Name: "web"}},
		"KIND/NAME as cmd.exe passes it": {args: []string{"'clusterroles.rbac.authorization.k8s.io/system:edit'"}, want: result{Kind: "clusterroles.rbac.authorization.k8s.io", Name: "system:edit"}},
		"KIND NAME":                      {args: []string{"deployment", "web"}, want: result{Kind: "deployment", Name: "web"}},
		"a NAME apart is never unquoted": {args: []string{"clusterrole", "'x'"}, want: result{Kind: "clusterrole", Name: "'x'"}},
		"a quote that is not the messages'": {
			args: []string{"'deployments.apps/web"},
			want: result{Kind: "'deployments.apps", Name: "web"},
		},
		"no name": {
			args: []string{"'deployments.apps/'"},
			want: result{Err: "name one object as KIND/NAME or KIND NAME, e.g. statefulset/my-app"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got result
			var err error
			got.Kind, got.Name, err = KindAndName(tc.args)
			if err != nil {
				got.Err = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("KindAndName(%q) (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}
