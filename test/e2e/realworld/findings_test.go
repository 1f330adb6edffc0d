package realworld_test

import "github.com/apply-hygiene/apply-hygiene/test/e2e/framework"

// The harness's names for the framework's truth-model vocabulary
// (framework/findings.go, framework/fieldpath.go).
type (
	finding     = framework.Finding
	reported    = framework.Reported
	expectation = framework.Expectation
	mismatch    = framework.Mismatch
	fieldPath   = framework.FieldPath
)

const (
	warn         = framework.Warn
	deny         = framework.Deny
	falseWarning = framework.FalseWarning
	falseDenial  = framework.FalseDenial
	miss         = framework.Miss
)

var (
	path        = framework.Path
	parseOutput = framework.ParseOutput
	compare     = framework.Compare
	orphan      = framework.Orphan
	revert      = framework.Revert
	edit        = framework.Edit
	sameAt      = framework.SameAt
	nothing     = framework.Nothing
	ensureMap   = framework.EnsureMap

	templatePath   = framework.TemplatePath
	containersPath = framework.ContainersPath
	replicasPath   = framework.ReplicasPath
	specPath       = framework.SpecPath
	generationPath = framework.GenerationPath
)

// changedPaths lists the fields that differ between a and b under p
// (framework.ChangedPaths).
func changedPaths(p fieldPath, a, b any) []fieldPath { return framework.ChangedPaths(p, a, b) }
