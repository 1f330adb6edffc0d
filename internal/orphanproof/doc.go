// Package orphanproof asks the API server which of an apply's orphans
// really are orphans: a field whose removal the API server undoes (a
// default of a discriminator a person changed, a field derived from a
// sibling, an allocated value) or refuses is none, whoever owns it.
//
// merge judges orphans from last-applied, managedFields and a table of
// defaults; this package narrows that judgement with the server's own
// answer (a server-side dry run of each removal, internal/kube's
// RemovalSticks). The admission driver (internal/review) and the audit
// both call Keep, so an orphan is proved one way wherever it is reported.
package orphanproof
