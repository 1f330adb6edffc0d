package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// KindAndName splits the arguments KIND/NAME or KIND NAME. KIND/NAME may
// come wrapped in the single quotes of a message's command, as cmd.exe
// passes them on (see UnquoteWord).
func KindAndName(args []string) (kind, name string, err error) {
	switch len(args) {
	case 1:
		kind, name, ok := strings.Cut(UnquoteWord(args[0]), "/")
		if ok && kind != "" && name != "" && !strings.Contains(name, "/") {
			return kind, name, nil
		}
	case 2:
		if args[0] != "" && args[1] != "" && !strings.Contains(args[0], "/") {
			return args[0], args[1], nil
		}
	}
	return "", "", BadInput(errors.New("name one object as KIND/NAME or KIND NAME, e.g. statefulset/my-app"))
}

// UnquoteWord returns arg without the POSIX single quotes around it when
// arg is exactly one word quoted as apply-hygiene's messages quote it, in
// single quotes with no quote inside but an escaped one (a quote closed,
// escaped and reopened), as in
//
//	'env[name=IT'\''S]'
//
// which is env[name=IT'S]. Windows' cmd.exe does not take single quotes
// for quotes, so a command copied from a message into it passes them on
// in the argument. Any other arg is returned as it is; a KIND/NAME or a
// path in the messages' notation never starts with a quote, so none is
// changed.
func UnquoteWord(arg string) string {
	if len(arg) < 2 || arg[0] != '\'' || arg[len(arg)-1] != '\'' {
		return arg
	}
	inner := arg[1 : len(arg)-1]
	if strings.Contains(strings.ReplaceAll(inner, `'\''`, ""), "'") {
		return arg
	}
	return strings.ReplaceAll(inner, `'\''`, "'")
}

// NamespaceOf returns -n, or the namespace of the kubeconfig's context.
func NamespaceOf(flags *genericclioptions.ConfigFlags) (string, error) {
	if flags.Namespace != nil && *flags.Namespace != "" {
		return *flags.Namespace, nil
	}
	ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("reading the namespace from the kubeconfig: %w", err)
	}
	return ns, nil
}

// NamespaceScope is the namespace a command that may span the cluster
// works in: "" with --all-namespaces (-A), which excludes -n, else
// NamespaceOf. Its errors are bad input.
func NamespaceScope(cmd *cobra.Command, all bool, flags *genericclioptions.ConfigFlags) (string, error) {
	if all {
		if cmd.Flags().Changed("namespace") {
			return "", BadInput(errors.New("--all-namespaces (-A) and --namespace (-n) exclude each other"))
		}
		return "", nil
	}
	ns, err := NamespaceOf(flags)
	if err != nil {
		return "", BadInput(err)
	}
	return ns, nil
}
