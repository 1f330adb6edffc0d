package generative_test

import (
	"slices"
	"strings"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// execute runs step s with kubectl k in namespace ns (k's own when ""):
// kubectl's command, with an editor script for kubectl edit, or, for a
// server-side apply that a tool sends itself, that apply through
// client-go.
func (r *runner) execute(k framework.Kubectl, ns string, s step) framework.Result {
	r.t.Helper()
	s = r.kustomized(s)
	args := r.spelledFor(k, s.Args)
	k = r.binary(k, s)
	if ns == "" {
		ns = k.Namespace
	}
	if ns == "" {
		ns = r.f.Namespace
	}
	switch {
	case s.Manager != "":
		return r.clientApply(k, ns, s)
	case s.Edit != "":
		editor := framework.WriteFile(r.t, "editor.sh", editorScript(s.Edit), 0o755)
		k.Env = append(append([]string{}, k.Env...), "EDITOR="+editor, "KUBE_EDITOR="+editor)
	}
	return k.RunWithInput(r.t, s.Stdin, args...)
}

// spelledFor returns args as k's kubectl spells them: the one hack/ builds
// takes them as generated; an older client (GENERATIVE_KUBECTL) takes
// kubectl autoscale's target as --cpu-percent=N, its name before
// kubectl 1.33's --cpu=N%.
func (r *runner) spelledFor(k framework.Kubectl, args []string) []string {
	if k.Path == r.f.Kubectl.Path || len(args) == 0 || args[0] != "autoscale" {
		return args
	}
	out := slices.Clone(args)
	for i, a := range out {
		if v, ok := strings.CutPrefix(a, "--cpu="); ok {
			out[i] = "--cpu-percent=" + strings.TrimSuffix(v, "%")
		}
	}
	return out
}

// editorScript is the KUBE_EDITOR of kubectl edit -o json: it rewrites
// the object kubectl opens with the jq filter, without kubectl's comment
// lines (its header, and the errors when it opens the file again after a
// denial: the same change again, which kubectl then cancels).
func editorScript(filter string) string {
	return "#!/bin/sh\nset -e\ngrep -v '^#' \"$1\" | jq " + shellQuote(filter) + " > \"$1.new\"\nmv \"$1.new\" \"$1\"\n"
}

// clientApply is a server-side apply of s.Stdin under the field manager
// s.Manager with force, sent as the tools that are not kubectl send it
// (framework's ToolApply). It returns what kubectl would have printed:
// the webhooks' warnings, the error of a denial.
func (r *runner) clientApply(k framework.Kubectl, ns string, s step) framework.Result {
	r.t.Helper()
	res := k.ToolApply(r.t, r.urlPath(ns)+"/"+r.o.name, s.Manager, []byte(s.Stdin))
	res.Args = s.Args
	r.t.Logf("$ %s\n%s(exit %d)", s.command(), res.Stderr, res.ExitCode)
	return res
}
