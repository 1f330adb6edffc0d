package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The helper runs `kubectl-hygiene __complete WORDS…`: a stand-in plugin
// on PATH records its arguments.
func TestCompleteRunsThePluginsComplete(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in plugin is a shell script")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "args")
	script := "#!/bin/sh\necho \"$@\" > " + out + "\nexit 3\n"
	if err := os.WriteFile(filepath.Join(dir, plugin), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if code := complete([]string{"diff", "-"}); code != 3 {
		t.Errorf("exit %d, want the plugin's 3", code)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(got)) != "__complete diff -" {
		t.Errorf("the plugin ran with %q, want %q", got, "__complete diff -")
	}
}

func TestCompleteWithoutThePlugin(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if code := complete([]string{""}); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
}
