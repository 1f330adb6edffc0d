package framework

import (
	"os"
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

// WriteReport also writes a package's summary to the file name in the
// directory $APPLY_HYGIENE_REPORTS names, when it is set: go test shows a
// passing package's output only with -v, and `make test` prints the file.
func WriteReport(t *testing.T, name, summary string) {
	t.Helper()
	writeReport(t, name, summary, os.O_TRUNC)
}

// AppendReport appends line to the report file name in
// APPLY_HYGIENE_REPORTS, when set: a long run's progress that outlives
// the run when it is stopped.
func AppendReport(t *testing.T, name, line string) {
	t.Helper()
	writeReport(t, name, line, os.O_APPEND)
}

// writeReport writes line to the report file name, opened with mode
// (os.O_TRUNC or os.O_APPEND), when APPLY_HYGIENE_REPORTS is set.
func writeReport(t *testing.T, name, line string, mode int) {
	t.Helper()
	dir := os.Getenv("APPLY_HYGIENE_REPORTS")
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Errorf("writing the report: %v", err)
		return
	}
	f, err := os.OpenFile(filepath.Join(dir, name), mode|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Errorf("writing the report: %v", err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Errorf("writing the report: %v", err)
	}
}
