package main

import (
	"testing"

	"github.com/spf13/pflag"
)

func TestValidateReportsFlags(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"openreports with the audit":     {args: []string{"--reports-format=openreports", "--audit-interval=1h", "--namespace=ns"}},
		"wgpolicy with a smaller report": {args: []string{"--reports-format=wgpolicy", "--reports-max-results=20", "--audit-interval=1h", "--namespace=ns"}},
		"none without the audit":         {args: []string{"--reports-format=none"}},
		"an unknown format": {args: []string{"--reports-format=kyverno"},
			want: `--reports-format: unknown report format "kyverno": want none, openreports or wgpolicy`},
		"reports without the audit": {args: []string{"--reports-format=openreports"},
			want: "--reports-format publishes the periodic audit's findings: it needs --audit-interval"},
		"no results": {args: []string{"--reports-max-results=0"}, want: "--reports-max-results must be positive, got 0"},
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
		})
	}
}
