package tracing_test

import (
	"context"
	"encoding/hex"
	"net"
	"strconv"
	"strings"
	"sync"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
)

// receiver is an OTLP/gRPC trace collector in the test: it keeps every
// span the API server and apply-hygiene export.
type receiver struct {
	collectortrace.UnimplementedTraceServiceServer
	server *grpc.Server
	addr   string

	mu    sync.Mutex
	spans []span
}

var _ collectortrace.TraceServiceServer = (*receiver)(nil)

// span is one exported span, flattened: the service that sent it, its
// IDs, name and string, bool and int attributes.
type span struct {
	Service, TraceID, SpanID, ParentID, Name string
	Attributes                               map[string]string
}

// startReceiver listens on a loopback port.
func startReceiver() (*receiver, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{server: grpc.NewServer(), addr: lis.Addr().String()}
	collectortrace.RegisterTraceServiceServer(r.server, r)
	go func() { _ = r.server.Serve(lis) }()
	return r, nil
}

// Export implements collectortrace.TraceServiceServer.
func (r *receiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		service := attributes(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, span{
					Service:    service,
					TraceID:    hex.EncodeToString(s.GetTraceId()),
					SpanID:     hex.EncodeToString(s.GetSpanId()),
					ParentID:   hex.EncodeToString(s.GetParentSpanId()),
					Name:       s.GetName(),
					Attributes: attributes(s.GetAttributes()),
				})
			}
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// Spans returns the spans received so far.
func (r *receiver) Spans() []span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]span(nil), r.spans...)
}

func attributes(kvs []*commonpb.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		v := kv.GetValue()
		switch {
		case v.GetArrayValue() != nil:
			var parts []string
			for _, e := range v.GetArrayValue().GetValues() {
				parts = append(parts, e.GetStringValue())
			}
			out[kv.GetKey()] = "[" + strings.Join(parts, ",") + "]"
		case isBool(v):
			out[kv.GetKey()] = strconv.FormatBool(v.GetBoolValue())
		case isInt(v):
			out[kv.GetKey()] = strconv.FormatInt(v.GetIntValue(), 10)
		default:
			out[kv.GetKey()] = v.GetStringValue()
		}
	}
	return out
}

func isBool(v *commonpb.AnyValue) bool {
	_, ok := v.GetValue().(*commonpb.AnyValue_BoolValue)
	return ok
}

func isInt(v *commonpb.AnyValue) bool {
	_, ok := v.GetValue().(*commonpb.AnyValue_IntValue)
	return ok
}
