package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/certs"
	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/policy"
	"github.com/apply-hygiene/apply-hygiene/reports"
	"github.com/apply-hygiene/apply-hygiene/webhook"
)

// Options are the server's flags; the defaults are documented on each flag
// and in docs/operations.md.
type Options struct {
	Kubeconfig             string
	Port                   int
	CertDir                string
	MetricsBindAddress     string
	HealthProbeBindAddress string
	// PprofBindAddress serves net/http/pprof's /debug/pprof/ there; empty
	// (the default) serves nothing. For profiling under load.
	PprofBindAddress string
	PolicyConfig     string
	PolicyDirs       []string
	FailurePolicy    string
	// PersonFieldManagers are field managers, besides kubectl's, whose
	// writes are a person's (see merge.WithKubectlManagers).
	PersonFieldManagers []string
	// ControllerUsers are user names, besides Kubernetes' components and
	// kube-controller-manager's service accounts, whose writes are a
	// controller's and never reviewed (review.WithControllerUsers).
	ControllerUsers []string
	// ShadowVerify runs every analysis also without pruning and fails the
	// review on a difference (merge.WithShadowVerify): for test runs.
	ShadowVerify bool
	// RemovalProofs proves an orphan's removal sticks with a server-side
	// dry run before it is reported or pruned (internal/kube's
	// RemovalSticks; needs patch on the reviewed kinds). Default true;
	// false leaves orphans to ownership and the table of defaults.
	RemovalProofs     bool
	NamespaceCacheTTL time.Duration
	// AdmissionEvents records a Warning event on the object for each rule
	// that denies or warns about a write (default true).
	AdmissionEvents bool
	// ShutdownDelay is how long the server keeps serving, not ready, after
	// the first SIGTERM before it closes its listener (default 5s).
	ShutdownDelay time.Duration
	// ShutdownTimeout bounds the drain of the reviews in flight and the
	// stop of everything else once the delay is over (default 30s).
	ShutdownTimeout time.Duration
	// LeaderElection tunes the election of the replica that runs the
	// periodic audit.
	LeaderElection LeaderElectionOptions
	// Tracing configures the reviews' OpenTelemetry traces; off by
	// default.
	Tracing           TracingOptions
	LogLevel          string
	Namespace         string
	TLSMode           string
	TLSSecretName     string
	WebhookConfigName string
	ServiceName       string
	TLSExtraHosts     []string
	TLSValidity       time.Duration
	TLSRenewBefore    time.Duration
	TLSCheckInterval  time.Duration
	// KubeAPIQPS and KubeAPIBurst bound the requests of the webhook's API
	// client (client-go's token bucket); the periodic audit has a client
	// and a bucket of its own with the same bounds, so that a scan never
	// makes a review wait.
	KubeAPIQPS    float32
	KubeAPIBurst  int
	AuditInterval time.Duration
	// AuditResources are the resources the periodic audit lists
	// (group/version/resource); empty: audit.DefaultResources.
	AuditResources []string
	// AuditFix lets the periodic audit write the fixes that need no person
	// (audit.Fixer, field manager audit.FixFieldManager); default false.
	AuditFix bool
	// LeaseOwnerConfigMap is a ConfigMap in --namespace that the audit
	// leader makes the owner of the audit's Leases (leaseOwner), so that
	// deleting it (helm uninstall) deletes them; empty (the default): no
	// owner, the Leases stay.
	LeaseOwnerConfigMap string
	// ExcludeNamespaces are namespaces, besides kube-system and
	// --namespace, that the chart's webhooks never review
	// (excludeNamespaces): the periodic audit fixes nothing there.
	ExcludeNamespaces []string
	// ObjectSelector is the webhooks' objectSelector as JSON (the chart's
	// webhook.objectSelector): --audit-fix writes only objects it matches.
	ObjectSelector string
	// ReportsFormat is the policy report format the periodic audit
	// publishes: none, openreports or wgpolicy (default none).
	ReportsFormat string
	// ReportsMaxResults is the most results one report keeps (default
	// reports.DefaultMaxResults).
	ReportsMaxResults int
	// MemoryBudget bounds the memory of the reviews in flight (a
	// quantity, e.g. 128Mi); empty: webhook.DefaultMemoryBudget, half of
	// GOMEMLIMIT; 0: no bound.
	MemoryBudget string
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig to reach the API server with; empty: the in-cluster service account")
	fs.IntVar(&o.Port, "port", 9443, "HTTPS port of the webhook endpoints /mutate and /validate")
	fs.StringVar(&o.CertDir, "cert-dir", "/tls", "directory with tls.crt and tls.key; reloaded when they change")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", ":8080", "address of the Prometheus /metrics endpoint; 0 disables it")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	fs.StringVar(&o.PprofBindAddress, "pprof-bind-address", "", "address of Go's /debug/pprof/ profiles (CPU, allocations); empty: off. Bind it to loopback: profiles show what the server holds")
	fs.StringVar(&o.PolicyConfig, "policy-config", "", "policy configuration (YAML or JSON): per-rule actions, break-glass groups, exemptions; empty: the defaults")
	fs.StringSliceVar(&o.PolicyDirs, "policy-dir", nil, "directory of user Rego policies, reloaded when it changes (repeatable)")
	fs.StringVar(&o.FailurePolicy, "failure-policy", "Ignore", "what an internal error answers, as the webhook configurations' failurePolicy: Ignore (allow, with a warning) or Fail (reject)")
	fs.StringSliceVar(&o.ControllerUsers, "controller-users", nil, "user names, besides Kubernetes' components and kube-controller-manager's service accounts, whose writes are a controller's and never reviewed (repeatable)")
	fs.StringSliceVar(&o.PersonFieldManagers, "person-field-managers", nil, "field managers, besides kubectl's own, whose writes are a person's (a UI such as Lens or k9s, a script's client): a field that only people own and that an apply leaves behind is an orphaned field (repeatable)")
	fs.BoolVar(&o.ShadowVerify, "shadow-verify", false, "for test runs: analyze every review twice, pruned and whole, and fail it on a difference (metric reason shadow_mismatch); doubles the cost of an analysis")
	fs.BoolVar(&o.AdmissionEvents, "admission-events", true, "record a Warning event on the object for each rule that denies or warns about a write (reason: the rule in CamelCase), at most one per object and rule a minute, never for a dry run")
	fs.BoolVar(&o.RemovalProofs, "removal-proofs", true, "before an orphaned-field finding is reported or pruned, prove with a server-side dry run (field manager "+
		kube.DryRunFieldManager+", its answer kept for the same write) that the API server would not put the value straight back; needs patch on the reviewed kinds. "+
		"false, or a proof that cannot be made, leaves the orphan to ownership and the table of defaults (apply_hygiene_removal_proofs_total{outcome=\"error\"})")
	fs.DurationVar(&o.NamespaceCacheTTL, "namespace-cache-ttl", 10*time.Second, "how long namespace labels (enforcement overrides) are cached")
	fs.DurationVar(&o.ShutdownDelay, "shutdown-delay", 5*time.Second, "on SIGTERM, how long the server keeps serving while /readyz fails, "+
		"before it closes its listener: the time for the Service's endpoints (or a load balancer probing /readyz) to stop sending new connections; 0 allowed")
	fs.DurationVar(&o.ShutdownTimeout, "shutdown-timeout", 30*time.Second, "after --shutdown-delay, how long in-flight reviews (and the rest of the server) may take to finish; "+
		"the process exits 1 when they outlast it")
	o.LeaderElection.AddFlags(fs)
	o.Tracing.AddFlags(fs)
	fs.StringVar(&o.LogLevel, "log-level", "info", "log level: info, debug or error")
	fs.StringVar(&o.Namespace, "namespace", os.Getenv("POD_NAMESPACE"), "the server's own namespace (default $POD_NAMESPACE)")
	fs.StringVar(&o.TLSMode, "tls-mode", "file", "file: serve the certificate in --cert-dir as mounted (cert-manager, or your own); self-managed: "+
		"keep a CA and serving certificate in --tls-secret-name, write them to --cert-dir, inject the CA into --webhook-config-name and rotate before expiry")
	fs.StringVar(&o.TLSSecretName, "tls-secret-name", "", "self-managed TLS: the Secret (in --namespace) shared by all replicas")
	fs.StringVar(&o.WebhookConfigName, "webhook-config-name", "", "self-managed TLS: name of the Mutating and the Validating webhook configuration")
	fs.StringVar(&o.ServiceName, "service-name", "", "self-managed TLS: the webhook Service the certificate is for")
	fs.StringSliceVar(&o.TLSExtraHosts, "tls-extra-hosts", nil, "self-managed TLS: more DNS names or IP addresses for the certificate (a server outside the cluster)")
	fs.DurationVar(&o.TLSValidity, "tls-validity", certs.DefaultValidity, "self-managed TLS: lifetime of the CA and the serving certificate")
	fs.DurationVar(&o.TLSRenewBefore, "tls-renew-before", 0, "self-managed TLS: renew this long before expiry; 0: a third of --tls-validity")
	fs.DurationVar(&o.AuditInterval, "audit-interval", 0, "run the audit of stored objects this often in one replica (leader election in --namespace); "+
		"findings become the gauge apply_hygiene_audit_findings and Warning events; 0 turns it off")
	fs.StringSliceVar(&o.AuditResources, "audit-resources", nil, "the resources the periodic audit lists, as group/version/resource "+
		"(version/resource for the core group, e.g. v1/configmaps); empty: apps/v1 deployments, statefulsets and daemonsets")
	fs.BoolVar(&o.AuditFix, "audit-fix", false, "let the periodic audit fix what needs no person, as kubectl hygiene audit --fix=apply: "+
		"write the repaired last-applied of an object undone before apply-hygiene was installed and remove orphaned fields, each object read again right before its write and patched with one JSON patch pinned to its resourceVersion "+
		"(field manager "+audit.FixFieldManager+", or for a repair the manager that owns last-applied; needs patch on the audited kinds); only for decisions whose action is repair or prune, or warn where the rule's auditFix is set, "+
		"never in kube-system, --namespace, --exclude-namespaces, namespaces labelled "+audit.IgnoreLabel+" or dryrun; each fix is logged, counted in apply_hygiene_audit_fixes_total and recorded as a Normal event AuditFixed")
	fs.StringVar(&o.LeaseOwnerConfigMap, "lease-owner-configmap", "", "periodic audit: a ConfigMap in --namespace that the leader makes the owner of "+
		"the Leases "+auditElectionLease+" and "+auditScheduleLease+", so that deleting it (the chart's, at helm uninstall) deletes them; empty: they stay")
	fs.StringSliceVar(&o.ExcludeNamespaces, "exclude-namespaces", nil, "namespaces that the webhook configurations' namespaceSelector leaves out besides kube-system and --namespace "+
		"(the chart's excludeNamespaces): as there and in namespaces labelled "+audit.IgnoreLabel+", --audit-fix writes nothing")
	fs.StringVar(&o.ObjectSelector, "object-selector", "", "the webhook configurations' objectSelector as JSON (the chart's webhook.objectSelector): --audit-fix writes only objects whose labels it matches; empty: every object")
	fs.StringVar(&o.ReportsFormat, "reports-format", string(reports.FormatNone), "publish the periodic audit's findings as policy reports, "+
		"one per namespace and one for cluster-scoped objects, updated in place at every audit: openreports (openreports.io/v1alpha1 Report, ClusterReport), "+
		"wgpolicy (wgpolicyk8s.io/v1alpha2 PolicyReport, ClusterPolicyReport) or none; needs --audit-interval and the format's CRDs "+
		"(while they are missing: an error in the log, a Warning event ReportsCRDMissing on $POD_NAME, the gauge apply_hygiene_reports_crd_missing)")
	fs.IntVar(&o.ReportsMaxResults, "reports-max-results", reports.DefaultMaxResults, "the most results one policy report keeps "+
		"(and at most 1 MiB of them); the others are counted in its annotation apply-hygiene.io/dropped-results")
	fs.StringVar(&o.MemoryBudget, "memory-budget", "", "memory the reviews in flight may hold (a quantity, e.g. 128Mi), "+
		"estimated as 12 times each review's body; a review beyond it is answered at once as --failure-policy says (metric reason overload); "+
		"empty: half of GOMEMLIMIT (the chart sets it from the memory limit), or 128Mi without one; 0: no bound")
	fs.DurationVar(&o.TLSCheckInterval, "tls-check-interval", certs.DefaultCheckInterval, "self-managed TLS: how often the Secret, the CA bundles and the files are checked")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", 50, "requests per second the reviews' API client may send on average (reads of /scale parents, revisions, namespace labels; removal proofs); "+
		"the periodic audit has a client with the same bounds of its own")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", 100, "requests the reviews' API client may send at once above --kube-api-qps; the periodic audit's client has its own")
}

// Validate checks the options; errors name the flag.
func (o *Options) Validate() error {
	var errs []error
	if o.Port < 1 || o.Port > 65535 {
		errs = append(errs, fmt.Errorf("--port must be 1..65535, got %d", o.Port))
	}
	if o.KubeAPIQPS <= 0 || o.KubeAPIBurst < 1 {
		errs = append(errs, fmt.Errorf("--kube-api-qps must be positive and --kube-api-burst at least 1, got %g and %d", o.KubeAPIQPS, o.KubeAPIBurst))
	}
	if o.FailurePolicy != "Ignore" && o.FailurePolicy != "Fail" {
		errs = append(errs, fmt.Errorf("--failure-policy must be Ignore or Fail, got %q", o.FailurePolicy))
	}
	switch o.LogLevel {
	case "info", "debug", "error":
	default:
		errs = append(errs, fmt.Errorf("--log-level must be info, debug or error, got %q", o.LogLevel))
	}
	switch o.TLSMode {
	case "file":
	case "self-managed":
		for _, f := range []struct{ flag, value string }{{"--tls-secret-name", o.TLSSecretName},
			{"--webhook-config-name", o.WebhookConfigName}, {"--service-name", o.ServiceName}, {"--namespace", o.Namespace}} {
			if f.value == "" {
				errs = append(errs, fmt.Errorf("%s is required with --tls-mode=self-managed", f.flag))
			}
		}
	default:
		errs = append(errs, fmt.Errorf("--tls-mode must be file or self-managed, got %q", o.TLSMode))
	}
	if o.AuditInterval < 0 {
		errs = append(errs, fmt.Errorf("--audit-interval must not be negative, got %s", o.AuditInterval))
	}
	if o.AuditInterval > 0 && o.Namespace == "" {
		errs = append(errs, errors.New("--namespace is required with --audit-interval (for leader election)"))
	}
	if o.AuditFix && o.AuditInterval == 0 {
		errs = append(errs, errors.New("--audit-fix fixes what the periodic audit finds: it needs --audit-interval"))
	}
	errs = append(errs, o.validateReports()...)
	if _, err := o.auditFixScope(); err != nil {
		errs = append(errs, err)
	}
	if _, err := auditResources(o.AuditResources); err != nil {
		errs = append(errs, err)
	}
	if _, err := o.memoryBudget(); err != nil {
		errs = append(errs, err)
	}
	if o.ShutdownTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--shutdown-timeout must be positive, got %s", o.ShutdownTimeout))
	}
	if o.ShutdownDelay < 0 {
		errs = append(errs, fmt.Errorf("--shutdown-delay must not be negative, got %s", o.ShutdownDelay))
	}
	errs = append(errs, o.LeaderElection.Validate()...)
	errs = append(errs, o.Tracing.Validate()...)
	return errors.Join(errs...)
}

// memoryBudget is --memory-budget in bytes.
func (o *Options) memoryBudget() (int64, error) {
	if o.MemoryBudget == "" {
		return webhook.DefaultMemoryBudget(), nil
	}
	q, err := resource.ParseQuantity(o.MemoryBudget)
	if err != nil || q.Sign() < 0 {
		return 0, fmt.Errorf("--memory-budget must be a quantity of bytes such as 128Mi, 0 or empty, got %q", o.MemoryBudget)
	}
	return q.Value(), nil
}

// loadPolicyConfig reads --policy-config; the zero Config means defaults.
func (o *Options) loadPolicyConfig() (policy.Config, error) {
	var cfg policy.Config
	if o.PolicyConfig == "" {
		return cfg, nil
	}
	raw, err := os.ReadFile(o.PolicyConfig)
	if err != nil {
		return cfg, fmt.Errorf("reading --policy-config: %w", err)
	}
	if err := yaml.UnmarshalStrict(raw, &cfg); err != nil {
		return cfg, fmt.Errorf("decoding --policy-config %s: %w", o.PolicyConfig, err)
	}
	if errs := cfg.Validate(); len(errs) > 0 {
		return cfg, fmt.Errorf("validating --policy-config %s: %w", o.PolicyConfig, errs.ToAggregate())
	}
	return cfg, nil
}
