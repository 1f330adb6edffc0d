package controlplane

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Binaries are the control plane's programs that hack/tools/build.sh
// builds: etcd, kube-apiserver, kube-controller-manager and kubectl.
var Binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kubectl"}

// RequireTools returns the directory of the pinned tools when every named
// one is there. Otherwise it calls Unavailable, naming what is missing.
func RequireTools(tb testing.TB, names ...string) string {
	tb.Helper()
	dir, err := FindBinDir()
	if err != nil {
		Unavailable(tb, fmt.Sprintf("the pinned tools: %v (run `make tools`)", err))
		return ""
	}
	if missing := MissingTools(dir, names...); len(missing) > 0 {
		Unavailable(tb, fmt.Sprintf("needs %s in %s: run `make tools` (hack/tools/build.sh)", strings.Join(missing, ", "), dir))
	}
	return dir
}

// Unavailable skips tb, saying why, or fails it when
// APPLY_HYGIENE_E2E=required (set by make test): there a missing tool is
// a broken setup, not a reason to test less.
func Unavailable(tb testing.TB, why string) {
	tb.Helper()
	if os.Getenv("APPLY_HYGIENE_E2E") == "required" {
		tb.Fatal(why)
	}
	tb.Skip(why)
}
