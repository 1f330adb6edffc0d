// Package realworld is the precision corpus: public workload manifests
// (Deployments, StatefulSets and DaemonSets from well-known open-source
// projects, kept verbatim in testdata/<project>/, provenance in
// testdata/README.md), each taken through a day in its life with real
// kubectl against a real control plane with apply-hygiene installed:
// create, change and apply, rollout restart, set env, set image, rollout
// undo and scale, each followed by an apply. Objects of the other kinds
// people kubectl apply (Services, ConfigMaps, Secrets, ServiceAccounts,
// Namespaces, Ingresses, NetworkPolicies, CronJobs, Jobs, HPAs, PDBs, RBAC,
// CRDs and their custom resources; at most 3 of a kind) live a day of
// their own: create, change and apply, kubectl label, patch and edit of a
// label last-applied owns, kubectl annotate, and applies after it. The
// chart is installed with kinds=common plus extraKinds for CRDs and the
// corpus's custom resources. Plus a Helm 3 release of the `helm create`
// scaffold and plain imperative use of a never-applied Deployment.
//
// The expected findings of every step come from a truth model, never from
// what apply-hygiene says: the harness tracks the fields it planted outside
// apply and reads the live object and last-applied around each apply. A
// finding no correct tool would give is a false warning or a false denial;
// an expected finding that is absent is a miss. The test fails on any of
// them and always prints one summary line with the counts:
//
//	realworld: 111 objects (76 workloads, 35 others: 3 ClusterRole, …, 1 Shirt) from 26 projects, 1066 steps, 0 false warnings, 0 false denials, 0 misses
//
// Before every apply of every day, the built `kubectl hygiene diff`
// predicts against the live cluster what the apply will print; kubectl
// apply must then print exactly the messages that diff predicted, and a
// second line counts them:
//
//	realworld: kubectl hygiene diff predicted N applies exactly (…)
//
// Run it with:
//
//	APPLY_HYGIENE_E2E=required go test ./test/e2e/realworld/
package realworld
