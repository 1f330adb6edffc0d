package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// The arguments the chart passes to the server (in each mode's rendered
// snapshot, test/chart/testdata) parse and validate: the chart and the
// flags cannot drift apart.
func TestChartArgumentsAreValidFlags(t *testing.T) {
	tests := map[string]struct{ snapshot string }{
		"self-managed TLS (default)": {snapshot: "default"},
		"cert-manager":               {snapshot: "cert-manager"},
		"the periodic audit":         {snapshot: "common"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := chartArgs(t, filepath.Join("..", "..", "test", "chart", "testdata", tc.snapshot, "manifests.golden.yaml"))
			var opts Options
			fs := pflag.NewFlagSet("apply-hygiene", pflag.ContinueOnError)
			opts.AddFlags(fs)
			if err := fs.Parse(args); err != nil {
				t.Fatalf("parsing %q: %v", args, err)
			}
			opts.Namespace = "apply-hygiene" // $(POD_NAMESPACE) in the pod
			if err := opts.Validate(); err != nil {
				t.Errorf("validating %q: %v", args, err)
			}
		})
	}
}

func TestValidateAcceptsTheDefaults(t *testing.T) {
	tests := map[string]struct{ args []string }{
		"no flags":                         {},
		"no shutdown delay":                {args: []string{"--shutdown-delay=0s"}},
		"a short, fast lease":              {args: []string{"--leader-election-lease-duration=4s", "--leader-election-renew-deadline=3s", "--leader-election-retry-period=500ms"}},
		"the audit with its election":      {args: []string{"--audit-interval=1h", "--namespace=ns"}},
		"profiles on loopback":             {args: []string{"--pprof-bind-address=127.0.0.1:6060"}},
		"tracing to a plaintext collector": {args: []string{"--tracing-endpoint=otel-collector:4317", "--tracing-insecure", "--tracing-sampling-ratio=0.1"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var opts Options
			fs := pflag.NewFlagSet("apply-hygiene", pflag.ContinueOnError)
			opts.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if err := opts.Validate(); err != nil {
				t.Errorf("Validate() = %v, want nil", err)
			}
		})
	}
}

func TestValidateNamesTheFlags(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"a bad failure policy": {args: []string{"--failure-policy=Sometimes"}, want: `--failure-policy must be Ignore or Fail, got "Sometimes"`},
		"a bad port":           {args: []string{"--port=0"}, want: "--port must be 1..65535, got 0"},
		"no API requests":      {args: []string{"--kube-api-qps=0", "--kube-api-burst=0"}, want: "--kube-api-qps must be positive and --kube-api-burst at least 1, got 0 and 0"},
		"self-managed TLS without its names": {args: []string{"--tls-mode=self-managed", "--namespace=ns"},
			want: "--tls-secret-name is required with --tls-mode=self-managed\n--webhook-config-name is required with --tls-mode=self-managed\n" +
				"--service-name is required with --tls-mode=self-managed"},
		"an unknown TLS mode":       {args: []string{"--tls-mode=magic"}, want: `--tls-mode must be file or self-managed, got "magic"`},
		"a negative shutdown delay": {args: []string{"--shutdown-delay=-1s"}, want: "--shutdown-delay must not be negative, got -1s"},
		"a lease no longer than the renew deadline": {args: []string{"--leader-election-lease-duration=10s"},
			want: "--leader-election-lease-duration (10s) must be greater than --leader-election-renew-deadline (10s)"},
		"a renew deadline within the jittered retry period": {args: []string{"--leader-election-renew-deadline=12s", "--leader-election-retry-period=10s"},
			want: "--leader-election-renew-deadline (12s) must be greater than 1.2 times --leader-election-retry-period (10s)"},
		"a sampling ratio over 1": {args: []string{"--tracing-endpoint=collector:4317", "--tracing-sampling-ratio=1.5"},
			want: "--tracing-sampling-ratio must be 0..1, got 1.5"},
		"plaintext tracing with a CA": {args: []string{"--tracing-endpoint=collector:4317", "--tracing-insecure", "--tracing-ca-file=ca.crt"},
			want: "--tracing-insecure and --tracing-ca-file exclude each other"},
		"leader-election durations that are not positive": {
			args: []string{"--leader-election-lease-duration=0s", "--leader-election-renew-deadline=-1s", "--leader-election-retry-period=0s"},
			want: "--leader-election-lease-duration must be positive, got 0s\n--leader-election-renew-deadline must be positive, got -1s\n" +
				"--leader-election-retry-period must be positive, got 0s"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var opts Options
			fs := pflag.NewFlagSet("apply-hygiene", pflag.ContinueOnError)
			opts.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := opts.Validate()
			if err == nil || err.Error() != tc.want {
				t.Errorf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}

// chartArgs returns the container args of the Deployment in a rendered
// chart snapshot.
func chartArgs(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		var d appsv1.Deployment
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("decoding %s: %v", path, err)
		}
		if d.Kind == "Deployment" && len(d.Spec.Template.Spec.Containers) > 0 {
			var args []string
			for _, a := range d.Spec.Template.Spec.Containers[0].Args {
				args = append(args, strings.ReplaceAll(a, "$(POD_NAMESPACE)", "apply-hygiene"))
			}
			return args
		}
	}
	t.Fatalf("no Deployment in %s", path)
	return nil
}

// The server refuses to start with ownership rules it cannot read, naming
// each wrong field, and reads good ones in every form.
func TestLoadPolicyConfigOwnership(t *testing.T) {
	tests := map[string]struct {
		config string
		want   string
		rules  int
	}{
		"the own, Argo CD and Flux forms are read": {
			config: "ownership:\n- {kinds: [apps/Deployment], paths: ['metadata.annotations[sidecar.istio.io/status]'], owner: cluster}\n" +
				"- argoCD: {group: apps, kind: Deployment, jsonPointers: [/spec/replicas], managedFieldsManagers: [kube-controller-manager]}\n" +
				"- flux: {paths: [/spec/replicas], target: {kind: StatefulSet}}\n",
			rules: 3,
		},
		"a jq expression and a dotted annotation key are refused": {
			config: "ownership:\n- argoCD: {kind: Deployment, jqPathExpressions: ['.spec.replicas']}\n- {kinds: [Deployment], paths: [metadata.annotations.example.com], owner: cluster}\n",
			want: "validating --policy-config CONFIG: [" +
				`ownership[0].argoCD.jqPathExpressions: Invalid value: ".spec.replicas": jq path expressions are not supported: write them as jsonPointers, or as an ownership rule's paths with * for any list element or map key (spec.template.spec.containers[*].image), ` +
				`ownership[1].paths[0]: Invalid value: "metadata.annotations.example.com": parsing path "metadata.annotations.example.com": metadata.annotations values are strings, so nothing lies beneath a key; write a key with dots or slashes in brackets, as messages print it: metadata.annotations[example.com/key]]`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(path, []byte(tc.config), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := (&Options{PolicyConfig: path}).loadPolicyConfig()
			if tc.want != "" {
				if err == nil || strings.ReplaceAll(err.Error(), path, "CONFIG") != tc.want {
					t.Fatalf("loadPolicyConfig error:\n got %v\nwant %s", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Ownership) != tc.rules {
				t.Errorf("ownership rules: got %d, want %d", len(cfg.Ownership), tc.rules)
			}
		})
	}
}
