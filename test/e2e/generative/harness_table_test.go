package generative_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Delta debugging finds the shortest subsequence that still fails.
func TestMinimise(t *testing.T) {
	tests := map[string]struct {
		steps  []int
		fails  func([]int) bool
		budget int
		want   []int
	}{
		"one culprit": {
			steps: []int{1, 2, 3, 4, 5, 6, 7, 8},
			fails: func(s []int) bool { return contains(s, 5) }, budget: 100,
			want: []int{5},
		},
		"two steps in order": {
			steps: []int{1, 2, 3, 4, 5, 6, 7, 8},
			fails: func(s []int) bool { return before(s, 2, 7) }, budget: 100,
			want: []int{2, 7},
		},
		"a budget of no replays keeps the sequence": {
			steps: []int{1, 2, 3},
			fails: func(s []int) bool { return contains(s, 3) }, budget: 0,
			want: []int{1, 2, 3},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, minimise(tc.steps, tc.fails, tc.budget)); diff != "" {
				t.Errorf("minimised (-want +got):\n%s", diff)
			}
		})
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// before reports whether a comes before b in s.
func before(s []int, a, b int) bool {
	seen := false
	for _, x := range s {
		seen = seen || x == a
		if x == b && seen {
			return true
		}
	}
	return false
}

// A failing sequence prints as a script a user replays.
func TestScript(t *testing.T) {
	steps := []step{
		{Writer: "kubectl apply (create)", As: alice, Kind: clientSideApply, Args: []string{"apply", "-f", "-"}, Stdin: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`},
		{Writer: "autoscaler scales through /scale", As: robot, Args: []string{"scale", "deployment/web", "--replicas=0"}},
		{Writer: "kubectl patch --type=merge", As: alice, Args: []string{"patch", "configmap/c", "--type=merge", "-p", `{"data":{"a":"it's"}}`}},
		{Writer: "follow the orphaned-field warnings' commands", As: alice, Kind: remedy},
		{Writer: "kubectl edit --save-config", As: alice, Args: []string{"edit", "configmap/c", "-o", "json", "--save-config"}, Edit: `.data["a"] = "b"`, RewritesLastApplied: true},
		toolApply(helmCI, "helm", map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}),
	}
	steps[len(steps)-1].Writer = "Helm 4 upgrade (server-side apply)"
	want := []string{
		"set -x",
		"kubectl create namespace demo",
		"kubectl create rolebinding edit-alice --clusterrole=edit --user=alice -n demo",
		"kubectl create serviceaccount robot -n demo",
		"kubectl create rolebinding edit-robot --clusterrole=edit --serviceaccount=demo:robot -n demo",
		"kubectl create serviceaccount helm -n demo",
		"kubectl create rolebinding edit-helm --clusterrole=edit --serviceaccount=demo:helm -n demo",
		"",
		"# 1. kubectl apply (create), as alice",
		"kubectl --as=alice -n demo apply -f - <<'EOF'",
		"apiVersion: v1",
		"kind: ConfigMap",
		"metadata:",
		"  name: c",
		"EOF",
		"",
		"# 2. autoscaler scales through /scale, as system:serviceaccount:demo:robot",
		"kubectl --as=system:serviceaccount:demo:robot -n demo scale deployment/web --replicas=0",
		"",
		"# 3. kubectl patch --type=merge, as alice",
		`kubectl --as=alice -n demo patch configmap/c --type=merge -p '{"data":{"a":"it'\''s"}}'`,
		"",
		"# 4. follow the orphaned-field warnings' commands, as alice",
		`# run each "Remove it with: kubectl patch …" command that the warnings of the apply above print`,
		"",
		"# 5. kubectl edit --save-config, as alice",
		"cat > editor.sh <<'EOF'",
		"#!/bin/sh",
		"set -e",
		`grep -v '^#' "$1" | jq '.data["a"] = "b"' > "$1.new"`,
		`mv "$1.new" "$1"`,
		"EOF",
		"chmod +x editor.sh",
		"KUBE_EDITOR=./editor.sh kubectl --as=alice -n demo edit configmap/c -o json --save-config",
		"",
		"# 6. Helm 4 upgrade (server-side apply), as system:serviceaccount:demo:helm",
		"# server-side apply as helm (client-go, no kubectl migration of client-side apply's fields), with force, as system:serviceaccount:demo:helm: PATCH with Content-Type application/apply-patch+yaml",
		": <<'EOF'",
		"apiVersion: v1",
		"kind: ConfigMap",
		"metadata:",
		"  name: c",
		"EOF",
		"",
	}
	if diff := cmp.Diff(want, strings.Split(script(steps), "\n")); diff != "" {
		t.Errorf("script (-want +got):\n%s", diff)
	}
}

// The commands that messages print split as a shell splits them.
func TestShellSplit(t *testing.T) {
	tests := map[string]struct {
		line string
		want []string
	}{
		"a patch in single quotes": {
			line: `kubectl patch deployment/web -n ns --type=json -p '[{"op":"remove","path":"/spec/paused"}]'`,
			want: []string{"kubectl", "patch", "deployment/web", "-n", "ns", "--type=json", "-p", `[{"op":"remove","path":"/spec/paused"}]`},
		},
		"a quote inside single quotes": {
			line: `echo 'it'\''s'`,
			want: []string{"echo", "it's"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := shellSplit(tc.line)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("words (-want +got):\n%s", diff)
			}
		})
	}
}
