package gateway_test

import (
	"context"
	"encoding/json"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// BenchmarkGatewayPathTraced is BenchmarkGatewayPath with the gateway and
// the edge tracing into the SDK's in-memory exporter (synchronously, so
// each call pays for its spans' export), under a host span: what an
// embedder that turns tracing on pays. docs/benchmarks/gateway.md
// records it as a ratio to the path with tracing off, measured in one
// run.
func BenchmarkGatewayPathTraced(b *testing.B) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	b.Cleanup(func() { tp.Shutdown(context.Background()) })
	r := rigtest.NewTraced(b, tp)
	r.Grant("issues.list")
	ch := r.Channel(rigtest.Member())
	args := json.RawMessage(`{"state":"open"}`)
	ctx, host := tp.Tracer("host").Start(context.Background(), "host")
	defer host.End()
	b.Run("gateway-traced", func(b *testing.B) {
		for b.Loop() {
			if _, err := ch.Call(ctx, "issues.list", args); err != nil {
				b.Fatal(err)
			}
			exp.Reset() // the exporter's memory does not grow over the run
		}
	})
}
