package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli/cluster"
)

// Without --live, diff reads each manifest's object from the cluster, as
// kubectl diff does: Deployment shop/web after a kubectl edit of its
// image.
func TestDiffReadsTheCluster(t *testing.T) {
	connect := fakeCluster(t, "testdata/cluster/deployment-edited.yaml")
	tests := map[string]struct {
		args     []string
		stdin    string
		code     int
		wantOut  []string
		wantPath string
	}{
		"reverting the edit warns: exit 0": {
			args: []string{"diff", "-f", "testdata/diff/web-v1.yaml", "-o", "json"},
			code: exitOK, wantPath: "spec.template.spec.containers[name=nginx].image",
		},
		"reverting the edit is denied as configured: exit 1": {
			args: []string{"diff", "-f", "testdata/diff/web-v1.yaml", "-o", "json", "--policy-config", "testdata/diff/deny-reverts.yaml"},
			code: exitFailure, wantPath: "spec.template.spec.containers[name=nginx].image",
		},
		"a directory tree with -R, the namespace from -n": {
			args: []string{"diff", "-R", "-f", "testdata/diff/tree", "-n", "shop"},
			code: exitOK, wantOut: []string{"ConfigMap shop/settings: would be created\n", "Deployment shop/web: "},
		},
		"stdin, the namespace of the manifest": {
			args:  []string{"diff", "-f", "-"},
			stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: new, namespace: shop}\n",
			code:  exitOK, wantOut: []string{"ConfigMap shop/new: would be created\n"},
		},
		"a kustomization": {
			args: []string{"diff", "-k", "testdata/diff/kustomize"},
			code: exitOK, wantOut: []string{"ConfigMap shop/settings-g5mh25c546: would be created\n", "Deployment shop/web: "},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			streams, in, out, errOut := genericiooptions.NewTestIOStreams()
			in.WriteString(tc.stdin)
			code := runWith(t.Context(), streams, tc.args, connect)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, errOut.String())
			}
			for _, want := range tc.wantOut {
				if !strings.Contains(out.String(), want) {
					t.Errorf("stdout does not say %q:\n%s", want, out.String())
				}
			}
			if strings.Contains(out.String(), "Deployment shop/web: would be created") {
				t.Errorf("the live Deployment was not found:\n%s", out.String())
			}
			if tc.wantPath == "" {
				return
			}
			var got struct {
				Findings []struct{ Rule, Action, Path string } `json:"findings"`
			}
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("decoding %s: %v", out.String(), err)
			}
			denied, found := 0, false
			for _, f := range got.Findings {
				found = found || f.Path == tc.wantPath
				if f.Action == "deny" {
					denied++
				}
			}
			if !found {
				t.Errorf("findings %+v, want one on %s", got.Findings, tc.wantPath)
			}
			want := exitOK
			if denied > 0 {
				want = exitFailure
				if !strings.Contains(errOut.String(), "with the action deny: kubectl apply would be denied") {
					t.Errorf("stderr %q does not say why the exit status is 1", errOut.String())
				}
			}
			if code != want {
				t.Errorf("exit %d with %d deny findings, want %d", code, denied, want)
			}
		})
	}
}

func TestDiffClusterErrors(t *testing.T) {
	down := func(*genericclioptions.ConfigFlags) (*cluster.Cluster, error) {
		return nil, errors.New("connection refused")
	}
	tests := map[string]struct {
		connect cluster.ConnectFunc
		args    []string
		code    int
		wantErr string
	}{
		"a manifest in another namespace than -n": {
			connect: fakeCluster(t), args: []string{"diff", "-f", "testdata/diff/web-v1.yaml", "-n", "other"},
			code: exitBadInput, wantErr: "Deployment web: the namespace of the manifest (shop) does not match --namespace other",
		},
		"a kind the cluster does not serve": {
			connect: fakeCluster(t), args: []string{"diff", "-f", "-"},
			code: exitBadInput, wantErr: "Widget w: the cluster has no resource for example.com/v1, Kind=Widget",
		},
		"no cluster: exit 3, not 1": {
			connect: down, args: []string{"diff", "-f", "testdata/diff/web-v1.yaml"},
			code: exitDiffError, wantErr: "connection refused",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			streams, in, out, errOut := genericiooptions.NewTestIOStreams()
			in.WriteString("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")
			code := runWith(t.Context(), streams, tc.args, tc.connect)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, errOut.String())
			}
			if !strings.Contains(errOut.String(), tc.wantErr) {
				t.Errorf("stderr %q does not say %q", errOut.String(), tc.wantErr)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q, want nothing", out.String())
			}
		})
	}
}

// diff exits 1 when any finding's action is deny, as kubectl diff exits 1
// when it finds differences.
func TestDiffOutcome(t *testing.T) {
	for _, tc := range []struct {
		actions []string
		code    int
		msg     string
	}{
		{nil, exitOK, ""},
		{[]string{"warn", "dryrun", "repair"}, exitOK, ""},
		{[]string{"warn", "deny"}, exitFailure, "1 finding with the action deny: kubectl apply would be denied"},
		{[]string{"deny", "deny"}, exitFailure, "2 findings with the action deny: kubectl apply would be denied"},
	} {
		err := diffOutcome(tc.actions)
		if code := exitCode(err); code != tc.code {
			t.Errorf("diffOutcome(%q) exits %d, want %d", tc.actions, code, tc.code)
		}
		if err != nil && err.Error() != tc.msg {
			t.Errorf("diffOutcome(%q) = %q, want %q", tc.actions, err, tc.msg)
		}
	}
	if code := exitCode(diffExit(errors.New("boom"))); code != exitDiffError {
		t.Errorf("diffExit of an error exits %d, want %d", code, exitDiffError)
	}
	if code := exitCode(diffExit(badInput(errors.New("flag")))); code != exitBadInput {
		t.Errorf("diffExit of bad input exits %d, want %d", code, exitBadInput)
	}
}
