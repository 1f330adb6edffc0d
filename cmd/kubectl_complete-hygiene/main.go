// Command kubectl_complete-hygiene completes `kubectl hygiene` on the
// command line. kubectl's shell completion, on `kubectl hygiene <TAB>`,
// runs the executable kubectl_complete-hygiene found on PATH with the words
// typed after the plugin's name; this one asks the plugin, through cobra's
// hidden __complete command, and prints its answer. Install it next to
// kubectl-hygiene (go install …/cmd/kubectl_complete-hygiene@latest).
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// plugin is the binary of the plugin that completes.
const plugin = "kubectl-hygiene"

func main() {
	os.Exit(complete(os.Args[1:]))
}

// complete runs the plugin's __complete with args, passing the streams, and
// returns its exit status.
func complete(args []string) int {
	bin, err := pluginPath()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubectl_complete-hygiene:", err)
		return 1
	}
	cmd := exec.Command(bin, append([]string{"__complete"}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubectl_complete-hygiene:", err)
		return 1
	}
	return 0
}

// pluginPath finds kubectl-hygiene next to this executable, else on PATH.
func pluginPath() (string, error) {
	name := plugin
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if self, err := os.Executable(); err == nil {
		next := filepath.Join(filepath.Dir(self), name)
		if st, err := os.Stat(next); err == nil && !st.IsDir() {
			return next, nil
		}
	}
	path, err := exec.LookPath(plugin)
	if err != nil {
		return "", fmt.Errorf("finding %s: %w", plugin, err)
	}
	return path, nil
}
