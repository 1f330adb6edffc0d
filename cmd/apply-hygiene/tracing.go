package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc/credentials"
	ctrl "sigs.k8s.io/controller-runtime"
)

// TracingOptions configure the OpenTelemetry traces of the reviews
// (webhook.WithTracerProvider), sent over OTLP/gRPC; off without an
// endpoint.
type TracingOptions struct {
	// Endpoint is the OTLP/gRPC collector's host:port; empty: tracing off
	// (the default).
	Endpoint string
	// SamplingRatio is the share of the reviews traced, 0..1 (default 1),
	// decided on the trace ID: of the reviews whose call carries no
	// traceparent, or of all of them without FollowParent.
	SamplingRatio float64
	// FollowParent makes a review whose call carries a traceparent follow
	// its sampled flag (default true): traced when the caller traces it,
	// never when the caller does not. Without it the ratio decides for
	// every review; a review traced still continues the caller's trace.
	FollowParent bool
	// Insecure sends to Endpoint without TLS (default false).
	Insecure bool
	// CAFile is a PEM bundle to verify the collector's certificate with;
	// empty: the system's roots.
	CAFile string
}

// AddFlags registers the options on fs.
func (o *TracingOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Endpoint, "tracing-endpoint", "", "OTLP/gRPC collector (host:port) to send a trace of each review to; empty: tracing off")
	fs.Float64Var(&o.SamplingRatio, "tracing-sampling-ratio", 1, "share (0..1) of the reviews traced, by trace ID: of those whose call has no traceparent, "+
		"or of all with --tracing-follow-parent=false")
	fs.BoolVar(&o.FollowParent, "tracing-follow-parent", true, "trace a review when its call's traceparent is sampled and never when it is not; "+
		"false: --tracing-sampling-ratio decides for every review (a traced one still continues the caller's trace)")
	fs.BoolVar(&o.Insecure, "tracing-insecure", false, "send traces to --tracing-endpoint without TLS")
	fs.StringVar(&o.CAFile, "tracing-ca-file", "", "PEM CA bundle to verify --tracing-endpoint's certificate with; empty: the system's roots")
}

// Validate checks the options; errors name the flag.
func (o *TracingOptions) Validate() []error {
	var errs []error
	if o.SamplingRatio < 0 || o.SamplingRatio > 1 {
		errs = append(errs, fmt.Errorf("--tracing-sampling-ratio must be 0..1, got %v", o.SamplingRatio))
	}
	if o.Insecure && o.CAFile != "" {
		errs = append(errs, errors.New("--tracing-insecure and --tracing-ca-file exclude each other"))
	}
	return errs
}

// tracerProvider returns the provider that exports the review spans,
// nil when tracing is off. Its Shutdown flushes the spans left.
func (o *TracingOptions) tracerProvider(ctx context.Context) (*sdktrace.TracerProvider, error) {
	if o.Endpoint == "" {
		return nil, nil
	}
	exporterOpts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(o.Endpoint)}
	switch {
	case o.Insecure:
		exporterOpts = append(exporterOpts, otlptracegrpc.WithInsecure())
	case o.CAFile != "":
		creds, err := credentials.NewClientTLSFromFile(o.CAFile, "")
		if err != nil {
			return nil, fmt.Errorf("reading --tracing-ca-file: %w", err)
		}
		exporterOpts = append(exporterOpts, otlptracegrpc.WithTLSCredentials(creds))
	}
	// The exporter reports a failed export here, not to the review.
	logger := ctrl.LoggerFrom(ctx)
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { logger.Error(err, "exporting traces failed") }))
	exporter, err := otlptracegrpc.New(ctx, exporterOpts...)
	if err != nil {
		return nil, fmt.Errorf("creating the OTLP trace exporter: %w", err)
	}
	return sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exporter),
		sdktrace.WithSampler(o.sampler()),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "apply-hygiene"))),
	), nil
}

// sampler decides which reviews are traced. A review's steps follow its
// root span (a local parent) either way. Its root follows the call's
// traceparent (a remote parent) with FollowParent, else the ratio decides
// on the trace ID, which is the caller's when there is a traceparent: the
// span stays in the caller's trace, and a caller that samples by the same
// ratio or a lower one, as kube-apiserver does (TraceIDRatioBased too), has
// each trace it keeps kept whole.
func (o *TracingOptions) sampler() sdktrace.Sampler {
	ratio := sdktrace.TraceIDRatioBased(o.SamplingRatio)
	if o.FollowParent {
		return sdktrace.ParentBased(ratio)
	}
	return sdktrace.ParentBased(ratio,
		sdktrace.WithRemoteParentSampled(ratio),
		sdktrace.WithRemoteParentNotSampled(ratio))
}

// flushTraces sends the spans still buffered, for at most five seconds
// after the server stopped (ctx ended).
func flushTraces(ctx context.Context, tp *sdktrace.TracerProvider) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "flushing traces failed")
	}
}
