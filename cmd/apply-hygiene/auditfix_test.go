package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/spf13/pflag"
)

func TestValidateAuditFixFlag(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"--audit-fix with the audit": {args: []string{"--audit-fix", "--audit-interval=1h", "--namespace=ns"}},
		"the audit without fixes":    {args: []string{"--audit-interval=1h", "--namespace=ns"}},
		"--audit-fix without the audit": {args: []string{"--audit-fix"},
			want: "--audit-fix fixes what the periodic audit finds: it needs --audit-interval"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var opts Options
			fs := pflag.NewFlagSet("apply-hygiene", pflag.ContinueOnError)
			opts.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			got := ""
			if err := opts.Validate(); err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("Validate() = %q, want %q", got, tc.want)
			}
			if opts.AuditFix != (tc.args[0] == "--audit-fix") {
				t.Errorf("AuditFix = %t for %q", opts.AuditFix, tc.args)
			}
		})
	}
}

// --object-selector is the webhooks' objectSelector in JSON: the audit
// fix writes only the objects it matches; a bad one is refused at start.
func TestAuditFixScopeObjectSelector(t *testing.T) {
	tests := map[string]struct {
		selector string
		// matches are the results for an object labelled team=shop and
		// one without labels; nil when the flag is refused.
		matches []bool
		wantErr string
	}{
		"empty: every object": {matches: []bool{true, true}},
		"matchExpressions DoesNotExist": {
			selector: `{"matchExpressions":[{"key":"example.com/unmanaged","operator":"DoesNotExist"}]}`,
			matches:  []bool{true, true},
		},
		"matchLabels": {selector: `{"matchLabels":{"team":"shop"}}`, matches: []bool{true, false}},
		"not JSON": {
			selector: `team=shop`,
			wantErr:  `--object-selector must be a label selector in JSON ({"matchLabels": …, "matchExpressions": […]}): invalid character 'e' in literal true (expecting 'r')`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			opts := Options{Namespace: "apply-hygiene", ObjectSelector: tc.selector}
			scope, err := opts.auditFixScope()
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []bool
			for _, l := range []map[string]string{{"team": "shop"}, nil} {
				got = append(got, scope.ObjectSelector == nil || scope.ObjectSelector.Matches(labels.Set(l)))
			}
			if diff := cmp.Diff(tc.matches, got); diff != "" {
				t.Errorf("matches (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"apply-hygiene"}, scope.ExcludedNamespaces); diff != "" {
				t.Errorf("excluded namespaces (-want +got):\n%s", diff)
			}
		})
	}
}
