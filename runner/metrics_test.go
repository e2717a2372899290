package runner_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/runnertest"
)

// TestMetricsCountCallsRefusalsAndAppends: the quickstart's turn (an
// allowed read, a smuggle its schema refuses, an approved effect) is
// read back with the SDK's ManualReader: three calls (two succeeded,
// one refused arguments_invalid), one refusal of that code, three
// latencies, and one append per event of the session's log.
func TestMetricsCountCallsRefusalsAndAppends(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { mp.Shutdown(context.Background()) })
	g := newRig(t, func(c *runner.Config, _ *rig) { c.MeterProvider = mp })
	s := g.admitted(t)
	said := turn(t, s, runnertest.QuickstartScript)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	sums := map[string]map[attribute.Distinct]int64{}
	var latencies uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					if sums[m.Name] == nil {
						sums[m.Name] = map[attribute.Distinct]int64{}
					}
					sums[m.Name][p.Attributes.Equivalent()] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					latencies += p.Count
				}
			}
		}
	}
	count := func(name string, kvs ...attribute.KeyValue) int64 {
		set := attribute.NewSet(kvs...)
		return sums[name][set.Equivalent()]
	}
	code := string(authz.CodeArgumentsInvalid)
	if got := count("checkfu.calls", attribute.String("checkfu.outcome", "succeeded"), attribute.String("checkfu.code", "")); got != 2 {
		t.Errorf("succeeded calls = %d, want 2 (agent said %q)", got, said)
	}
	if got := count("checkfu.calls", attribute.String("checkfu.outcome", "refused"), attribute.String("checkfu.code", code)); got != 1 {
		t.Errorf("refused calls = %d, want 1", got)
	}
	if got := count("checkfu.refusals", attribute.String("checkfu.code", code)); got != 1 {
		t.Errorf("refusals{%s} = %d, want 1", code, got)
	}
	if latencies != 3 {
		t.Errorf("%d latencies recorded, want 3", latencies)
	}
	if got, want := count("checkfu.log.appends"), int64(len(entries(t, g.Runner, member.Session))); got != want {
		t.Errorf("log appends = %d, want %d, one per event of the session", got, want)
	}
}
