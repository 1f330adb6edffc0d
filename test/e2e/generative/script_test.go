package generative_test

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// scriptNamespace is the namespace a printed script works in.
const scriptNamespace = "demo"

// script renders steps as a shell script a user can replay against a
// cluster with apply-hygiene installed, as an admin who may impersonate:
// the namespace and the identities' roles first, then each command with
// --as, manifests inline as heredocs.
func script(steps []step) string {
	var b strings.Builder
	b.WriteString("set -x\n")
	fmt.Fprintf(&b, "kubectl create namespace %s\n", scriptNamespace)
	for _, w := range identities(steps) {
		subject := "--user=" + string(w)
		if w.namespaceOf() != "" {
			subject = "--serviceaccount=" + saNamespace(w) + ":" + string(w)
			fmt.Fprintf(&b, "kubectl create serviceaccount %s -n %s\n", w, saNamespace(w))
		}
		fmt.Fprintf(&b, "kubectl create rolebinding edit-%s --clusterrole=edit %s -n %s\n", w, subject, scriptNamespace)
	}
	for i, s := range steps {
		fmt.Fprintf(&b, "\n# %d. %s, as %s\n", i+1, s.Writer, s.As.username(scriptNamespace))
		switch s.Kind {
		case remedy:
			b.WriteString("# run each \"Remove it with: kubectl patch …\" command that the warnings of the apply above print\n")
			continue
		case handover:
			fmt.Fprintf(&b, "# run the \"kubectl hygiene handover … %s\" command that the denial above prints\n", strings.Join(s.HandsOver, " "))
			continue
		case undo, dryRunUndo:
			b.WriteString("# (wait until the controller has recorded the current revision)\n")
		}
		if s.Binary != "" {
			// kubectl under the file name of another client (oc): its
			// user agent, and so its field manager, is that name.
			fmt.Fprintf(&b, "ln -sf \"$(command -v kubectl)\" ./%s\n", s.Binary)
		}
		switch {
		case s.Manager != "":
			// No kubectl command sends it (kubectl apply --server-side
			// migrates client-side apply's fields to the manager): a
			// comment, and the manifest to a no-op.
			fmt.Fprintf(&b, "%s, with force, as %s: PATCH with Content-Type application/apply-patch+yaml\n:", s.command(), s.As.username(scriptNamespace))
		case s.Stdin != "" && slices.Contains(s.Args, "-k"):
			b.WriteString(kustomizeScript(s))
			fmt.Fprintf(&b, "kubectl --as=%s -n %s %s\n", s.As.username(scriptNamespace), scriptNamespace, shellJoin(s.Args))
			continue
		case s.Kind == hygiene:
			// kubectl runs a plugin only when its name comes first; the
			// script's admin runs it.
			fmt.Fprintf(&b, "kubectl %s -n %s\n", shellJoin(s.Args), scriptNamespace)
			continue
		case s.Binary != "":
			fmt.Fprintf(&b, "./%s --as=%s -n %s %s", s.Binary, s.As.username(scriptNamespace), scriptNamespace, shellJoin(s.Args))
		case s.Edit != "":
			fmt.Fprintf(&b, "cat > editor.sh <<'EOF'\n%sEOF\nchmod +x editor.sh\n", editorScript(s.Edit))
			b.WriteString("KUBE_EDITOR=./editor.sh ")
			fallthrough
		default:
			fmt.Fprintf(&b, "kubectl --as=%s -n %s %s", s.As.username(scriptNamespace), scriptNamespace, shellJoin(s.Args))
		}
		if s.Stdin == "" {
			b.WriteString("\n")
			continue
		}
		doc, err := yaml.JSONToYAML([]byte(s.Stdin))
		if err != nil {
			doc = []byte(s.Stdin)
		}
		fmt.Fprintf(&b, " <<'EOF'\n%sEOF\n", doc)
	}
	return b.String()
}

// saNamespace is the namespace of who's service account in a script.
func saNamespace(w who) string {
	if w.namespaceOf() == "." {
		return scriptNamespace
	}
	return w.namespaceOf()
}

// identities lists the identities steps run as, in first-use order.
func identities(steps []step) []who {
	var out []who
	for _, s := range steps {
		if s.As != admin && !slices.Contains(out, s.As) {
			out = append(out, s.As)
		}
	}
	return out
}

// shellJoin quotes each argument for a POSIX shell where it needs it.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = shellQuote(a)
	}
	return strings.Join(out, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./:,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellSplit splits a command line as a POSIX shell does for words in
// single quotes, double quotes (without expansions) and plain words: the
// commands apply-hygiene's messages print.
func shellSplit(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated single quote in %q", line)
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			j := strings.IndexByte(line[i+1:], '"')
			if j < 0 {
				return nil, fmt.Errorf("unterminated double quote in %q", line)
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '\\' && i+1 < len(line):
			cur.WriteByte(line[i+1])
			i++
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
