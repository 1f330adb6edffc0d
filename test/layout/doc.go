// Package layout checks the import graph against the layers of
// docs/architecture.md: data flows webhook → merge (facts) → policy (decisions) →
// webhook (response); merge and policy never import a driver; the drivers
// (the webhook, the audit, the CLI) import neither each other nor anything
// above them; nothing below cmd/ but cmd/apply-hygiene imports webhook.
// It also checks, with `make -n`, that each Makefile target builds only the
// pinned tools it runs (makefile_test.go).
package layout
