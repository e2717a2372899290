package broker_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/checkfu/checkfu/gateway/broker"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// TestModelTokensAreMetered: a model call through the broker's model
// route counts as a call, and the tokens the (scripted) provider
// reported are read back with the SDK's ManualReader, by direction.
func TestModelTokensAreMetered(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { mp.Shutdown(context.Background()) })
	r := rigtest.NewModelMetered(t, mp)
	r.Grant(rigtest.ModelCapability)
	b, err := broker.New(r.Channel(rigtest.Member()))
	if err != nil {
		t.Fatal(err)
	}
	c := modelClient(t, rigtest.ServeBroker(t, b))
	if status, body := post(t, c, "POST", "/v1/messages", allowed); status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok {
				for _, p := range s.DataPoints {
					key := m.Name
					for _, kv := range p.Attributes.ToSlice() {
						if kv.Key == attribute.Key("checkfu.direction") || kv.Key == attribute.Key("checkfu.outcome") {
							key += "/" + kv.Value.String()
						}
					}
					got[key] += p.Value
				}
			}
		}
	}
	for name, want := range map[string]int64{"checkfu.model.tokens/input": 100, "checkfu.model.tokens/output": 10, "checkfu.calls/succeeded": 1} {
		if got[name] != want {
			t.Errorf("%s = %d, want %d (all: %v)", name, got[name], want, got)
		}
	}
}
