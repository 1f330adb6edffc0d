package generative_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// Writers the model follows by name.
const (
	setLastApplied  = "kubectl apply set-last-applied"
	dropLastApplied = "kubectl annotate kubectl.kubernetes.io/last-applied-configuration-"
	ocUndo          = "oc rollout undo"
)

// everydayWriters are the commands people run that the two catalogues
// lacked: kubectl apply --server-side under kubectl's default field
// manager without --force-conflicts (the move from client-side to
// server-side apply), the bookkeeping of last-applied by hand (kubectl
// apply set-last-applied, its removal with kubectl annotate), OpenShift's
// oc rollout undo (kubectl's undo under the field manager oc), kubectl set
// env NAME- of a variable of the manifest, and a server-side dry run of
// kubectl rollout undo.
var everydayWriters = []writer{
	{name: "kubectl apply --server-side", weight: 2, make: func(g *gen) step {
		// The manifest the person applies client-side, or a change of it:
		// kubectl exits 1 and writes nothing when the manifest sets a
		// field another manager owns to another value (a conflict).
		m := g.manifest
		if g.rng.IntN(2) == 0 {
			m = g.mutated()
		}
		return step{As: alice, Kind: serverSideApply, Args: []string{"apply", "--server-side", "-f", "-"}, Stdin: encode(m)}
	}},
	{name: setLastApplied, weight: 2, make: func(g *gen) step {
		// It records the manifest as last-applied and changes nothing
		// else; without last-applied it needs --create-annotation (which
		// missing-last-applied's audit message prescribes).
		s := person("apply", "set-last-applied", "-f", "-")
		if !g.lastApplied {
			s.Args = append(s.Args, "--create-annotation")
		}
		s.Stdin, s.RewritesLastApplied = encode(g.manifest), true
		return s
	}},
	{name: dropLastApplied, weight: 2, fits: func(g *gen) bool { return g.lastApplied }, make: func(g *gen) step {
		return person("annotate", g.o.ref(), lastAppliedKey+"-")
	}},
	{name: ocUndo, weight: 2, fits: undoable, make: func(g *gen) step {
		s := person("rollout", "undo", g.o.ref())
		s.Kind, s.Binary = undo, "oc"
		return s
	}},
	{name: "kubectl set env NAME- of a variable of the manifest", weight: 2, fits: func(g *gen) bool { return workload(g) && len(g.manifestEnvs()) > 0 }, make: func(g *gen) step {
		names := g.manifestEnvs()
		return person("set", "env", g.o.ref(), "-c", g.container(), names[g.rng.IntN(len(names))]+"-")
	}},
	{name: "kubectl rollout undo --dry-run=server", weight: 2, fits: undoable, make: func(g *gen) step {
		s := person("rollout", "undo", g.o.ref(), "--dry-run=server")
		s.Kind = dryRunUndo
		return s
	}},
}

// undoable reports whether a rollout undo fits: a workload that had two
// pod templates and is not paused (kubectl refuses to undo a paused
// Deployment).
func undoable(g *gen) bool { return workload(g) && g.templates >= 2 && !g.paused }

// manifestEnvs are the names of the variables of the manifest's first
// container.
func (g *gen) manifestEnvs() []string {
	v, _ := framework.ContainersPath.Lookup(g.manifest)
	list, _ := v.([]any)
	if len(list) == 0 {
		return nil
	}
	first, _ := list[0].(map[string]any)
	env, _ := first["env"].([]any)
	var out []string
	for _, e := range env {
		m, _ := e.(map[string]any)
		if name, ok := m["name"].(string); ok {
			out = append(out, name)
		}
	}
	return out
}

// binary returns k running the step's Binary: the built kubectl under
// that file name, hard-linked (or copied) once per runner into a
// directory of its own. client-go derives the user agent from the
// binary's file name, so the API server records a write that sends no
// field manager (rollout undo) under it: oc, as OpenShift's CLI, which
// builds kubectl's rollout undo in.
func (r *runner) binary(k framework.Kubectl, s step) framework.Kubectl {
	if s.Binary == "" {
		return k
	}
	if r.binaries == nil {
		r.binaries = map[string]string{}
	}
	// The person's own kubectl under the other name (GENERATIVE_KUBECTL
	// may give people older clients).
	key := s.Binary + " " + k.Path
	path, ok := r.binaries[key]
	if !ok {
		path = filepath.Join(r.t.TempDir(), s.Binary)
		if err := linkOrCopy(k.Path, path); err != nil {
			r.t.Fatalf("making kubectl %s: %v", s.Binary, err)
		}
		r.binaries[key] = path
	}
	k.Path = path
	return k
}

// linkOrCopy makes dst the file src names (through symlinks): a hard
// link, or a copy where the two are on different file systems.
func linkOrCopy(src, dst string) error {
	real, err := filepath.EvalSymlinks(src)
	if err != nil {
		return fmt.Errorf("resolving %s: %w", src, err)
	}
	if os.Link(real, dst) == nil {
		return nil
	}
	in, err := os.Open(real)
	if err != nil {
		return fmt.Errorf("opening %s: %w", real, err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		return fmt.Errorf("creating %s: %w", dst, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copying %s to %s: %w", real, dst, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", dst, err)
	}
	return nil
}
