package broker_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/checkfu/checkfu/gateway/broker"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// TestModelCallIsTraced: a model call through the broker's model route
// runs in the span checkfu.pipeline/model, under the channel's trace
// parent, and its stream in the client span checkfu.edge/stream under
// that, with the answer's status; no attribute holds the prompt.
func TestModelCallIsTraced(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	r := rigtest.NewModelTraced(t, tp)
	r.Grant(rigtest.ModelCapability)
	ch := r.Channel(rigtest.Member())
	_, host := tp.Tracer("host").Start(context.Background(), "host turn")
	ch.SetTrace(host.SpanContext())
	b, err := broker.New(ch)
	if err != nil {
		t.Fatal(err)
	}
	c := modelClient(t, rigtest.ServeBroker(t, b))
	if status, body := post(t, c, "POST", "/v1/messages", allowed); status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	host.End()
	var found bool
	var model, stream tracetest.SpanStub
	for _, sp := range exp.GetSpans() {
		switch sp.Name {
		case "checkfu.pipeline/model":
			model = sp
		case "checkfu.edge/stream":
			stream = sp
		}
		if sp.SpanContext.TraceID() != host.SpanContext().TraceID() {
			t.Errorf("span %s is not in the host's trace", sp.Name)
		}
		for _, kv := range sp.Attributes {
			if v := kv.Value.String(); v == "hi" || len(v) > 200 {
				t.Errorf("span %s attribute %s holds content: %q", sp.Name, kv.Key, v)
			}
		}
		if sp.Name == "checkfu.pipeline/model" {
			found = true
			if sp.Parent.SpanID() != host.SpanContext().SpanID() {
				t.Errorf("the model span's parent is %s, not the channel's trace parent", sp.Parent.SpanID())
			}
		}
	}
	if !found {
		t.Errorf("no checkfu.pipeline/model span in %d spans", len(exp.GetSpans()))
	}
	if stream.Name == "" {
		t.Fatalf("no checkfu.edge/stream span in %d spans", len(exp.GetSpans()))
	}
	if stream.Parent.SpanID() != model.SpanContext.SpanID() {
		t.Errorf("the stream span's parent is %s, not the model span %s", stream.Parent.SpanID(), model.SpanContext.SpanID())
	}
	var status int64
	for _, kv := range stream.Attributes {
		if kv.Key == "http.response.status_code" {
			status = kv.Value.AsInt64()
		}
	}
	if status != 200 {
		t.Errorf("the stream span's status is %d, want 200", status)
	}
}
