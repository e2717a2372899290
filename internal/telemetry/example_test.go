package telemetry_test

import (
	"context"
	"fmt"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/telemetry"
)

// With no provider tracing is off: Start's spans record nothing.
func ExampleTracer() {
	_, span := telemetry.Start(context.Background(), telemetry.Tracer(nil), "checkfu.example/step")
	fmt.Println(span.IsRecording())
	telemetry.End(span, "permission_missing")
	// Output: false
}

func ExampleRequest() {
	for _, kv := range telemetry.Request(checkfu.RequestContext{Actor: "user:bob", Session: "sess-1", Request: "req-1"}) {
		fmt.Println(kv.Key, kv.Value.String())
	}
	// Output:
	// checkfu.session sess-1
	// checkfu.request req-1
	// checkfu.actor user:bob
}

func ExampleEnd() {
	_, span := telemetry.Start(context.Background(), telemetry.Tracer(nil), "checkfu.example/call")
	telemetry.End(span, "") // ok: no code, no error status
	// Output:
}

// With no provider metrics are off: the instruments are nil and record
// nothing.
func ExampleNewCallMetrics() {
	m := telemetry.NewCallMetrics(nil)
	m.Refusal(context.Background(), "permission_missing")
	fmt.Println(m == nil)
	// Output: true
}
