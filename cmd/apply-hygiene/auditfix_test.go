package main

import (
	"testing"

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
