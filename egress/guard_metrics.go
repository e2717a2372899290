package egress

import (
	"context"

	"go.opentelemetry.io/otel/metric"

	"github.com/checkfu/checkfu/internal/telemetry"
)

// The guard's instruments, observed when a reader collects.
const (
	// MetricGuardTunnels is the CONNECT tunnels the guard holds open;
	// each holds two descriptors.
	MetricGuardTunnels = "checkfu.guard.tunnels"
	// MetricGuardTunnelLimit is the guard's MaxTunnels.
	MetricGuardTunnelLimit = "checkfu.guard.tunnel_limit"
	// MetricGuardConnections is the workload connections the guard
	// holds, idle ones included; each holds a descriptor.
	MetricGuardConnections = "checkfu.guard.connections"
	// MetricGuardConnectionLimit is the guard's MaxConnections.
	MetricGuardConnectionLimit = "checkfu.guard.connection_limit"
	// MetricGuardRefusals counts the refusals the guard has answered
	// (403, 400, and 503 to a connection past its cap), every one,
	// logged or not (see [RefusalLogsPerSecond]).
	MetricGuardRefusals = "checkfu.guard.refusals"
)

// observe registers the guard's gauges with mp's meter and returns the
// function that unregisters them; nil for a nil mp.
func (g *Guard) observe(mp metric.MeterProvider) (func(), error) {
	m := telemetry.Meter(mp)
	if m == nil {
		return nil, nil
	}
	tunnels, err := m.Int64ObservableGauge(MetricGuardTunnels, metric.WithDescription("CONNECT tunnels open through the guard"))
	if err != nil {
		return nil, err
	}
	tunnelLimit, err := m.Int64ObservableGauge(MetricGuardTunnelLimit, metric.WithDescription("the guard's bound on open tunnels"))
	if err != nil {
		return nil, err
	}
	conns, err := m.Int64ObservableGauge(MetricGuardConnections, metric.WithDescription("workload connections the guard holds"))
	if err != nil {
		return nil, err
	}
	connLimit, err := m.Int64ObservableGauge(MetricGuardConnectionLimit, metric.WithDescription("the guard's bound on workload connections"))
	if err != nil {
		return nil, err
	}
	refusals, err := m.Int64ObservableCounter(MetricGuardRefusals, metric.WithDescription("refusals the guard has answered"))
	if err != nil {
		return nil, err
	}
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		g.mu.Lock()
		open := g.open
		g.mu.Unlock()
		o.ObserveInt64(tunnels, int64(open))
		o.ObserveInt64(tunnelLimit, int64(g.maxTunnels))
		o.ObserveInt64(conns, g.conns.Load())
		o.ObserveInt64(connLimit, int64(g.maxConns))
		o.ObserveInt64(refusals, g.refusals.Load())
		return nil
	}, tunnels, tunnelLimit, conns, connLimit, refusals)
	if err != nil {
		return nil, err
	}
	return func() { _ = reg.Unregister() }, nil
}
