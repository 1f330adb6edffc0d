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
	// SamplingRatio is the share of the reviews without a sampled parent
	// that are traced, 0..1 (default 1). A review whose traceparent the
	// API server sent follows the API server's decision.
	SamplingRatio float64
	// Insecure sends to Endpoint without TLS (default false).
	Insecure bool
	// CAFile is a PEM bundle to verify the collector's certificate with;
	// empty: the system's roots.
	CAFile string
}

// AddFlags registers the options on fs.
func (o *TracingOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Endpoint, "tracing-endpoint", "", "OTLP/gRPC collector (host:port) to send a trace of each review to; empty: tracing off")
	fs.Float64Var(&o.SamplingRatio, "tracing-sampling-ratio", 1, "share (0..1) of the reviews traced when the API server sent no sampled traceparent; "+
		"a review the API server traces is always traced")
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
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(o.SamplingRatio))),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "apply-hygiene"))),
	), nil
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
