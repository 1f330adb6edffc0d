package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// kubectl's own plugin completion (`kubectl __complete hygiene …`, what
// the shell runs on `kubectl hygiene <TAB>`) finds kubectl_complete-hygiene
// on PATH and offers the plugin's commands. It needs the pinned kubectl
// (make tools) and skips without it.
func TestKubectlCompletesThePlugin(t *testing.T) {
	if testing.Short() || runtime.GOOS == "windows" {
		t.Skip("builds both binaries and runs kubectl")
	}
	binDir := os.Getenv("APPLY_HYGIENE_BIN_DIR")
	if binDir == "" {
		binDir = filepath.Join("..", "..", ".cache", "bin")
	}
	kubectl, err := filepath.Abs(filepath.Join(binDir, "kubectl"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kubectl); err != nil {
		t.Skipf("no pinned kubectl (make tools): %v", err)
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
