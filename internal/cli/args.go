package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// KindAndName splits the arguments KIND/NAME or KIND NAME.
func KindAndName(args []string) (kind, name string, err error) {
	switch len(args) {
	case 1:
		kind, name, ok := strings.Cut(args[0], "/")
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
