package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/apply-hygiene/apply-hygiene/audit"
	"github.com/apply-hygiene/apply-hygiene/certs"
	"github.com/apply-hygiene/apply-hygiene/internal/kube"
	"github.com/apply-hygiene/apply-hygiene/merge"
	"github.com/apply-hygiene/apply-hygiene/policy"
	"github.com/apply-hygiene/apply-hygiene/webhook"
)

// run wires the server together and serves until ctx ends or a signal
// arrives on signals (shutdownOnSignal: the first shuts down gracefully,
// the second calls exit(1)).
func run(ctx context.Context, opts Options, signals <-chan os.Signal, exit func(code int)) error {
	logger := newLogger(opts.LogLevel)
	ctrl.SetLogger(logger)
	ctx = ctrl.LoggerInto(ctx, logger)
	notShuttingDown := &readinessGate{}
	ctx = shutdownOnSignal(ctx, signals, opts.ShutdownDelay, notShuttingDown.Close, exit)

	cfg, err := restConfig(opts.Kubeconfig)
	if err != nil {
		return err
	}
	engine, err := newEngine(ctx, opts)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = opts.KubeAPIQPS, opts.KubeAPIBurst
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating the API client: %w", err)
	}
	// The audit's own client: client-go gives each client its own token
	// bucket, so that a scan's reads and removal proofs never make a
	// review's wait (and time out into a finding the proof would drop).
	auditDyn, err := dynamic.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return fmt.Errorf("creating the audit's API client: %w", err)
	}
	metrics, err := webhook.NewMetrics(ctrlmetrics.Registry, engine.Status)
	if err != nil {
		return err
	}
	budget, err := opts.memoryBudget()
	if err != nil {
		return err
	}
	schemas, err := newSchemas(cfg)
	if err != nil {
		return err
	}
	// One analyzer: its type converters are built once and shared.
	analyzerOpts := []merge.Option{merge.WithKubectlManagers(opts.PersonFieldManagers...), merge.WithSchemas(schemas)}
	if opts.ShadowVerify {
		analyzerOpts = append(analyzerOpts, merge.WithShadowVerify())
	}
	analyzer := merge.NewAnalyzer(analyzerOpts...)
	mgr, err := newManager(cfg, opts, logger)
	if err != nil {
		return err
	}
	reviewerOpts := []webhook.Option{webhook.WithAnalyzer(analyzer), webhook.WithFailOpen(opts.FailurePolicy == "Ignore"),
		webhook.WithMetrics(metrics), webhook.WithMemoryBudget(budget), webhook.WithControllerUsers(opts.ControllerUsers...)}
	if opts.AdmissionEvents {
		reviewerOpts = append(reviewerOpts, webhook.WithEventRecorder(mgr.GetEventRecorder("apply-hygiene")))
	}
	tp, err := opts.Tracing.tracerProvider(ctx)
	if err != nil {
		return err
	}
	if tp != nil {
		defer flushTraces(ctx, tp)
		reviewerOpts = append(reviewerOpts, webhook.WithTracerProvider(tp))
	}
	autoscalers, err := addAutoscalers(mgr, cfg)
	if err != nil {
		return err
	}
	cluster, err := reviewCluster(dyn, opts, autoscalers)
	if err != nil {
		return err
	}
	reviewer := webhook.NewReviewer(engine, cluster, reviewerOpts...)
	if err := mgr.AddReadyzCheck("shutdown", notShuttingDown.Check); err != nil {
		return fmt.Errorf("adding the shutdown readiness check: %w", err)
	}
	if err := addSchemas(mgr, schemas); err != nil {
		return err
	}
	server := mgr.GetWebhookServer()
	for path, handler := range reviewer.Handlers() {
		server.Register(path, closeConnectionsOnceShuttingDown(notShuttingDown, keepThroughShutdown(ctx.Done(), reviewer.Traced(path, handler))))
	}
	if err := addCertManager(ctx, mgr, cfg, opts); err != nil {
		return err
	}
	if err := addPolicySources(mgr, cfg, engine, opts); err != nil {
		return err
	}
	scope, err := opts.auditFixScope()
	if err != nil {
		return err
	}
	if err := addAudit(mgr, cfg, auditDyn, audit.NewScanner(auditDyn, analyzer, engine, append(auditOptions(opts), audit.WithFixScope(scope))...), opts); err != nil {
		return err
	}
	logger.Info("starting", "port", opts.Port, "certDir", opts.CertDir, "failurePolicy", opts.FailurePolicy, "memoryBudget", budget)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
}

// addAutoscalers runs the cache of HorizontalPodAutoscalers that the
// reviews read (replicas-autoscaled) in every replica. Until it has synced
// the reviews go on without autoscalers.
func addAutoscalers(mgr manager.Manager, cfg *rest.Config) (*kube.Autoscalers, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the API client: %w", err)
	}
	autoscalers, err := kube.NewAutoscalers(client)
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(autoscalers); err != nil {
		return nil, fmt.Errorf("adding the HorizontalPodAutoscaler cache: %w", err)
	}
	return autoscalers, nil
}

// addCertManager runs self-managed TLS: the certificate must be in
// --cert-dir before the webhook server starts, so it is ensured once here.
func addCertManager(ctx context.Context, mgr manager.Manager, cfg *rest.Config, opts Options) error {
	if opts.TLSMode != "self-managed" {
		return nil
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating the API client: %w", err)
	}
	m, err := certs.NewManager(client, certs.Options{
		Namespace:         opts.Namespace,
		SecretName:        opts.TLSSecretName,
		ServiceName:       opts.ServiceName,
		WebhookConfigName: opts.WebhookConfigName,
		CertDir:           opts.CertDir,
		ExtraHosts:        opts.TLSExtraHosts,
		Validity:          opts.TLSValidity,
		RenewBefore:       opts.TLSRenewBefore,
		CheckInterval:     opts.TLSCheckInterval,
	})
	if err != nil {
		return fmt.Errorf("configuring self-managed TLS: %w", err)
	}
	if err := m.Ensure(ctx); err != nil {
		return fmt.Errorf("preparing self-managed TLS: %w", err)
	}
	if err := mgr.Add(m); err != nil {
		return fmt.Errorf("adding the certificate manager: %w", err)
	}
	return nil
}

// addPolicySources keeps the user policies current: the --policy-dir
// directories and the ConfigMaps labelled apply-hygiene.io/policy=rego in
// the server's own namespace.
func addPolicySources(mgr manager.Manager, cfg *rest.Config, engine *policy.Engine, opts Options) error {
	if len(opts.PolicyDirs) > 0 {
		if err := mgr.Add(manager.RunnableFunc(engine.Watch)); err != nil {
			return fmt.Errorf("adding the policy watcher: %w", err)
		}
	}
	if opts.Namespace == "" {
		return nil
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating the API client: %w", err)
	}
	src := policy.NewConfigMapSource(engine, client, opts.Namespace)
	if err := mgr.Add(src); err != nil {
		return fmt.Errorf("adding the ConfigMap policy source: %w", err)
	}
	if err := mgr.AddReadyzCheck("policies", src.ReadyCheck); err != nil {
		return fmt.Errorf("adding the policy readiness check: %w", err)
	}
	return nil
}

// auditElectionLease is the Lease (in --namespace) of the audit's leader
// election.
const auditElectionLease = "apply-hygiene-audit"

// auditScheduleLease is the Lease (in --namespace) in which the audit
// leader records the start of each scan, so that a new leader waits the
// rest of the interval instead of scanning again at once.
const auditScheduleLease = "apply-hygiene-audit-schedule"

// addAudit runs the periodic audit (--audit-interval) in the leader, on
// the schedule shared by the replicas.
func addAudit(mgr manager.Manager, cfg *rest.Config, dyn dynamic.Interface, scanner *audit.Scanner, opts Options) error {
	if opts.AuditInterval == 0 {
		return nil
	}
	resources, err := auditResources(opts.AuditResources)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating the API client: %w", err)
	}
	identity, err := replicaIdentity()
	if err != nil {
		return err
	}
	recorder := mgr.GetEventRecorder("apply-hygiene-audit")
	publisher, err := newReportPublisher(cfg, dyn, recorder, opts)
	if err != nil {
		return err
	}
	var fixer *audit.Fixer
	if opts.AuditFix {
		fixer = audit.NewFixer(dyn, mgr.GetRESTMapper(), audit.FixFieldManager)
	}
	runner, err := audit.NewRunner(scanner, audit.RunnerOptions{
		Target:    audit.Target{Resources: resources},
		Interval:  opts.AuditInterval,
		Registry:  ctrlmetrics.Registry,
		Recorder:  recorder,
		Schedule:  audit.NewLeaseSchedule(client.CoordinationV1(), opts.Namespace, auditScheduleLease, identity),
		Publisher: publisher,
		Fixer:     fixer,
	})
	if err != nil {
		return err
	}
	if err := mgr.Add(runner); err != nil {
		return fmt.Errorf("adding the audit: %w", err)
	}
	if opts.LeaseOwnerConfigMap == "" {
		return nil
	}
	owner := &leaseOwner{client: client, namespace: opts.Namespace, configMap: opts.LeaseOwnerConfigMap,
		leases: []string{auditElectionLease, auditScheduleLease}, every: 5 * opts.LeaderElection.RetryPeriod}
	if err := mgr.Add(owner); err != nil {
		return fmt.Errorf("adding the audit leases' owner: %w", err)
	}
	return nil
}

// replicaIdentity names this replica in the audit schedule: $POD_NAME
// (the chart sets it from the downward API), else the host name.
func replicaIdentity() (string, error) {
	if name := os.Getenv("POD_NAME"); name != "" {
		return name, nil
	}
	name, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("naming this replica for the audit schedule (set POD_NAME): %w", err)
	}
	return name, nil
}

func newEngine(ctx context.Context, opts Options) (*policy.Engine, error) {
	pcfg, err := opts.loadPolicyConfig()
	if err != nil {
		return nil, err
	}
	engine, err := policy.New(ctx, policy.WithConfig(pcfg), policy.WithDirs(opts.PolicyDirs...))
	if err != nil {
		return nil, fmt.Errorf("loading policies: %w", err)
	}
	return engine, nil
}

func newManager(cfg *rest.Config, opts Options, logger logr.Logger) (manager.Manager, error) {
	timeout := opts.ShutdownTimeout
	le := opts.LeaderElection
	mgr, err := ctrl.NewManager(cfg, manager.Options{
		// The runnables (audit, certificates, policy sources) log through
		// logr.FromContext: without a BaseContext controller-runtime gives
		// them context.Background, and their logs, errors included, were
		// discarded.
		BaseContext:             func() context.Context { return ctrl.LoggerInto(context.Background(), logger) },
		Metrics:                 metricsserver.Options{BindAddress: opts.MetricsBindAddress},
		HealthProbeBindAddress:  opts.HealthProbeBindAddress,
		PprofBindAddress:        opts.PprofBindAddress,
		GracefulShutdownTimeout: &timeout,
		// Only the periodic audit runs in one replica; the webhooks serve
		// in all of them.
		LeaderElection:          opts.AuditInterval > 0,
		LeaderElectionID:        auditElectionLease,
		LeaderElectionNamespace: opts.Namespace,
		LeaseDuration:           &le.LeaseDuration,
		RenewDeadline:           &le.RenewDeadline,
		RetryPeriod:             &le.RetryPeriod,
		// On a graceful shutdown the leader releases the lease once the
		// manager has stopped every runnable, the audit included (its
		// leader-election group stops before the lease is released), so
		// another replica takes it over within a retry period instead of
		// after --leader-election-lease-duration. Safe because nothing
		// runs after the manager stops: run returns and the process exits.
		LeaderElectionReleaseOnCancel: true,
		WebhookServer: crwebhook.NewServer(crwebhook.Options{
			Port:    opts.Port,
			CertDir: opts.CertDir,
			TLSOpts: []func(*tls.Config){secureTLS},
		}),
	})
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return nil, fmt.Errorf("adding the readiness check: %w", err)
	}
	return mgr, nil
}

// secureTLS sets TLS 1.2 as the minimum (1.3 is negotiated when the client
// offers it) and, for 1.2, only forward-secret AEAD suites.
func secureTLS(c *tls.Config) {
	c.MinVersion = tls.VersionTLS12
	c.CipherSuites = []uint16{
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
		tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	}
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("reading the in-cluster config (set --kubeconfig outside a cluster): %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading --kubeconfig: %w", err)
	}
	return cfg, nil
}

func logLevel(level string) zapcore.Level {
	switch level {
	case "debug":
		return zapcore.DebugLevel
	case "error":
		return zapcore.ErrorLevel
	}
	return zapcore.InfoLevel
}
