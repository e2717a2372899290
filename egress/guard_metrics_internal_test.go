package egress

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// gauges collects reader's gauges by name.
func gauges(t *testing.T, reader *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if g, ok := m.Data.(metricdata.Gauge[int64]); ok && len(g.DataPoints) == 1 {
				out[m.Name] = g.DataPoints[0].Value
			}
		}
	}
	return out
}

// TestGuardGaugesCountTunnels: with a MeterProvider the guard's gauges,
// read back with the SDK's ManualReader, report its bounds and the
// tunnel it holds open.
func TestGuardGaugesCountTunnels(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { mp.Shutdown(context.Background()) })
	rig := newTunnelRig(t, true, GuardConfig{MeterProvider: mp, MaxTunnels: 7, MaxConnections: 9})
	if got := gauges(t, reader); got[MetricGuardTunnels] != 0 || got[MetricGuardTunnelLimit] != 7 || got[MetricGuardConnectionLimit] != 9 {
		t.Fatalf("idle guard's gauges: %v", got)
	}
	c, status, code := rig.dial(t, "")
	defer c.Close()
	if status != 200 {
		t.Fatalf("CONNECT = %d %s", status, code)
	}
	if got := gauges(t, reader); got[MetricGuardTunnels] != 1 || got[MetricGuardConnections] < 1 {
		t.Errorf("with one tunnel: %v", got)
	}
}
