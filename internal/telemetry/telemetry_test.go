package telemetry_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/checkfu/checkfu/internal/telemetry"
)

// TestEndSetsTheCodeAlone: a span ended with a code carries it as its
// attribute and its status description, and one ended without is ok.
func TestEndSetsTheCodeAlone(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	tr := telemetry.Tracer(tp)
	_, refused := tr.Start(context.Background(), "refused")
	telemetry.End(refused, "permission_missing")
	_, ok := tr.Start(context.Background(), "ok")
	telemetry.End(ok, "")
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans", len(spans))
	}
	if s := spans[0]; s.Status.Code != codes.Error || s.Status.Description != "permission_missing" || len(s.Attributes) != 1 || s.Attributes[0].Value.AsString() != "permission_missing" {
		t.Errorf("refused span: %+v %v", s.Status, s.Attributes)
	}
	if s := spans[1]; s.Status.Code != codes.Unset || len(s.Attributes) != 0 {
		t.Errorf("ok span: %+v %v", s.Status, s.Attributes)
	}
	if s := spans[0]; s.InstrumentationScope.Name != telemetry.ScopeName {
		t.Errorf("scope %q", s.InstrumentationScope.Name)
	}
}

// TestNilProviderAllocatesNothing: an embedder that sets no provider
// pays no allocation for a span.
func TestNilProviderAllocatesNothing(t *testing.T) {
	tr := telemetry.Tracer(nil)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		_, span := telemetry.Start(ctx, tr, "x")
		telemetry.End(span, "failed")
	})
	if allocs != 0 {
		t.Errorf("a no-op span costs %v allocations", allocs)
	}
}
