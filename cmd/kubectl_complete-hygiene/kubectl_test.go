package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// kubectl's own plugin completion (`kubectl __complete hygiene …`, what
// the shell runs on `kubectl hygiene <TAB>`) finds kubectl_complete-hygiene
// on PATH and offers the plugin's commands. It needs the pinned kubectl
// (make tools): without it the test skips, naming it, or fails under make
// test (controlplane.RequireTools).
func TestKubectlCompletesThePlugin(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the plugin binaries are built without .exe names here; Windows is not tested")
	}
	kubectl, err := filepath.Abs(filepath.Join(controlplane.RequireTools(t, "kubectl"), "kubectl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "../kubectl-hygiene", ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building: %v\n%s", err, out)
	}
	cmd := exec.Command(kubectl, "__complete", "hygiene", "")
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl __complete hygiene: %v\n%s", err, out)
	}
	var names []string
	for _, l := range strings.Split(string(out), "\n") {
		if name, _, _ := strings.Cut(l, "\t"); name != "" && !strings.HasPrefix(name, ":") {
			names = append(names, name)
		}
	}
	for _, want := range []string{"diff", "explain", "audit", "test"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Errorf("kubectl hygiene <TAB> offers %q, not %q", names, want)
		}
	}
}
