package framework

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// InstallOpenReportsCRDs applies the OpenReports CRDs of the module this
// repository requires (config/crd of github.com/openreports/reports-api)
// and waits until both are established.
func (f *Framework) InstallOpenReportsCRDs(t *testing.T) {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "go", "list", "-m", "-f", "{{.Dir}}", "github.com/openreports/reports-api").Output()
	if err != nil {
		t.Fatalf("go list -m github.com/openreports/reports-api: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd")
	admin := f.Kubectl
	admin.Namespace = ""
	admin.Run(t, "apply", "-f", dir).MustSucceed(t)
	admin.Run(t, "wait", "--for=condition=Established", "--timeout=60s",
		"crd/reports.openreports.io", "crd/clusterreports.openreports.io").MustSucceed(t)
}
