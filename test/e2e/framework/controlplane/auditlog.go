package controlplane

import (
	"fmt"
	"path/filepath"
)

// auditPolicy records, at level Metadata, every write of the workload
// kinds apply-hygiene reviews, with the annotations admission webhooks
// add (validate.apply-hygiene.io/rule …); nothing else, so that the log
// stays small.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
    verbs: ["create", "update", "patch"]
    resources:
      - group: apps
        resources: ["deployments", "deployments/scale", "statefulsets", "statefulsets/scale", "daemonsets"]
  - level: None
`

// auditLogArgs writes the audit policy to the working directory and returns the
// API server's flags that write the audit log to cp.AuditLogPath().
func (cp *ControlPlane) auditLogArgs() ([]string, error) {
	policy := filepath.Join(cp.dir, "audit-policy.yaml")
	if err := writeFile(policy, []byte(auditPolicy)); err != nil {
		return nil, fmt.Errorf("writing the audit policy: %w", err)
	}
	return []string{"--audit-policy-file=" + policy, "--audit-log-path=" + cp.AuditLogPath(), "--audit-log-format=json"}, nil
}

// AuditLogPath is the API server's audit log: one JSON audit.k8s.io/v1
// Event a line, at level Metadata, for every create, update and patch of
// Deployments (and their /scale), StatefulSets and DaemonSets.
func (cp *ControlPlane) AuditLogPath() string {
	return filepath.Join(cp.dir, "logs", "kube-apiserver-audit.log")
}
