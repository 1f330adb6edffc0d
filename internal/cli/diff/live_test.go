package diff

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/clitest"
	"github.com/apply-hygiene/apply-hygiene/internal/cli/cluster"
)

// Without --live, diff reads each manifest's object from the cluster, as
// kubectl diff does: Deployment shop/web after a kubectl edit of its
// image.
func TestDiffReadsTheCluster(t *testing.T) {
	connect := clitest.FakeCluster(t, "testdata/cluster/deployment-edited.yaml")
	tests := map[string]struct {
		args     []string
		stdin    string
		code     int
		wantOut  []string
		wantPath string
	}{
		"reverting the edit warns: exit 0": {
			args: []string{"-f", "testdata/diff/web-v1.yaml", "-o", "json"},
			code: cli.ExitOK, wantPath: "spec.template.spec.containers[name=nginx].image",
		},
		"reverting the edit is denied as configured: exit 1": {
			args: []string{"-f", "testdata/diff/web-v1.yaml", "-o", "json", "--policy-config", "testdata/diff/deny-reverts.yaml"},
			code: cli.ExitFailure, wantPath: "spec.template.spec.containers[name=nginx].image",
		},
		"a directory tree with -R, the namespace from -n": {
			args: []string{"-R", "-f", "testdata/diff/tree", "-n", "shop"},
			code: cli.ExitOK, wantOut: []string{"ConfigMap shop/settings: would be created\n", "Deployment shop/web: "},
		},
		"stdin, the namespace of the manifest": {
			args:  []string{"-f", "-"},
			stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: new, namespace: shop}\n",
			code:  cli.ExitOK, wantOut: []string{"ConfigMap shop/new: would be created\n"},
		},
		"a kustomization": {
			args: []string{"-k", "testdata/diff/kustomize"},
			code: cli.ExitOK, wantOut: []string{"ConfigMap shop/settings-g5mh25c546: would be created\n", "Deployment shop/web: "},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			streams, in, out, errOut := genericiooptions.NewTestIOStreams()
			in.WriteString(tc.stdin)
			code := execute(t, streams, tc.args, connect)
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
			want := cli.ExitOK
			if denied > 0 {
				want = cli.ExitFailure
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
			connect: clitest.FakeCluster(t), args: []string{"-f", "testdata/diff/web-v1.yaml", "-n", "other"},
			code: cli.ExitBadInput, wantErr: "Deployment web: the namespace of the manifest (shop) does not match --namespace other",
		},
		"a kind the cluster does not serve": {
			connect: clitest.FakeCluster(t), args: []string{"-f", "-"},
			code: cli.ExitBadInput, wantErr: "Widget w: the cluster has no resource for example.com/v1, Kind=Widget",
		},
		"no cluster: exit 3, not 1": {
			connect: down, args: []string{"-f", "testdata/diff/web-v1.yaml"},
			code: exitError, wantErr: "connection refused",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			streams, in, out, errOut := genericiooptions.NewTestIOStreams()
			in.WriteString("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")
			code := execute(t, streams, tc.args, tc.connect)
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
		{nil, cli.ExitOK, ""},
		{[]string{"warn", "dryrun", "repair"}, cli.ExitOK, ""},
		{[]string{"warn", "deny"}, cli.ExitFailure, "1 finding with the action deny: kubectl apply would be denied"},
		{[]string{"deny", "deny"}, cli.ExitFailure, "2 findings with the action deny: kubectl apply would be denied"},
	} {
		err := outcome(tc.actions)
		if code := cli.Code(err); code != tc.code {
			t.Errorf("outcome(%q) exits %d, want %d", tc.actions, code, tc.code)
		}
		if err != nil && err.Error() != tc.msg {
			t.Errorf("outcome(%q) = %q, want %q", tc.actions, err, tc.msg)
		}
	}
	if code := cli.Code(withExitStatus(errors.New("boom"))); code != exitError {
		t.Errorf("withExitStatus of an error exits %d, want %d", code, exitError)
	}
	if code := cli.Code(withExitStatus(cli.BadInput(errors.New("flag")))); code != cli.ExitBadInput {
		t.Errorf("withExitStatus of bad input exits %d, want %d", code, cli.ExitBadInput)
	}
}
