package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// The instruments checkfu's packages record, by name.
const (
	// MetricCalls counts tool calls through the call pipeline, by
	// checkfu.outcome (succeeded, refused, failed) and checkfu.code.
	MetricCalls = "checkfu.calls"
	// MetricRefusals counts the pipeline's refusals, by checkfu.code.
	MetricRefusals = "checkfu.refusals"
	// MetricCallDuration is the latency of a tool call through the
	// pipeline, in seconds, by checkfu.outcome.
	MetricCallDuration = "checkfu.call.duration"
	// MetricLogAppends counts events appended to a session log.
	MetricLogAppends = "checkfu.log.appends"
	// MetricModelTokens counts the tokens model providers reported, by
	// checkfu.direction (input, output).
	MetricModelTokens = "checkfu.model.tokens"
)

// KeyDirection is the attribute of a token count's direction.
const KeyDirection = attribute.Key("checkfu.direction")

// KeyOutcome is the attribute of a call's outcome.
const KeyOutcome = attribute.Key("checkfu.outcome")

// Meter returns checkfu's meter from mp, or nil for a nil mp: metrics
// off.
func Meter(mp metric.MeterProvider) metric.Meter {
	if mp == nil {
		return nil
	}
	return mp.Meter(ScopeName)
}

// CallMetrics are the call pipeline's instruments. A nil *CallMetrics
// records nothing.
type CallMetrics struct {
	calls    metric.Int64Counter
	refusals metric.Int64Counter
	duration metric.Float64Histogram
	tokens   metric.Int64Counter
}

// NewCallMetrics returns the call pipeline's instruments from mp, or nil
// (metrics off) for a nil mp or one that cannot make them.
func NewCallMetrics(mp metric.MeterProvider) *CallMetrics {
	m := Meter(mp)
	if m == nil {
		return nil
	}
	var cm CallMetrics
	var err [4]error
	cm.calls, err[0] = m.Int64Counter(MetricCalls, metric.WithDescription("tool calls through the call pipeline"))
	cm.refusals, err[1] = m.Int64Counter(MetricRefusals, metric.WithDescription("refusals of the call pipeline, by code"))
	cm.duration, err[2] = m.Float64Histogram(MetricCallDuration, metric.WithUnit("s"), metric.WithDescription("latency of a tool call through the call pipeline"))
	cm.tokens, err[3] = m.Int64Counter(MetricModelTokens, metric.WithDescription("tokens model providers reported, by direction"))
	for _, e := range err {
		if e != nil {
			return nil
		}
	}
	return &cm
}

// Call records one call's outcome, code ("" when none) and latency.
func (m *CallMetrics) Call(ctx context.Context, outcome, code string, d time.Duration) {
	if m == nil {
		return
	}
	set := metric.WithAttributes(KeyOutcome.String(outcome), KeyCode.String(code))
	m.calls.Add(ctx, 1, set)
	m.duration.Record(ctx, d.Seconds(), metric.WithAttributes(KeyOutcome.String(outcome)))
}

// Tokens records the tokens a model provider reported for one call.
func (m *CallMetrics) Tokens(ctx context.Context, input, output int64) {
	if m == nil {
		return
	}
	if input > 0 {
		m.tokens.Add(ctx, input, metric.WithAttributes(KeyDirection.String("input")))
	}
	if output > 0 {
		m.tokens.Add(ctx, output, metric.WithAttributes(KeyDirection.String("output")))
	}
}

// Refusal records one refusal with its code.
func (m *CallMetrics) Refusal(ctx context.Context, code string) {
	if m == nil {
		return
	}
	m.refusals.Add(ctx, 1, metric.WithAttributes(KeyCode.String(code)))
}

// LogMetrics are the event log's instruments. A nil *LogMetrics records
// nothing.
type LogMetrics struct {
	appends metric.Int64Counter
}

// NewLogMetrics returns the event log's instruments from mp, or nil
// (metrics off).
func NewLogMetrics(mp metric.MeterProvider) *LogMetrics {
	m := Meter(mp)
	if m == nil {
		return nil
	}
	c, err := m.Int64Counter(MetricLogAppends, metric.WithDescription("events appended to session logs"))
	if err != nil {
		return nil
	}
	return &LogMetrics{appends: c}
}

// Appended records n events appended.
func (m *LogMetrics) Appended(ctx context.Context, n int) {
	if m != nil && n > 0 {
		m.appends.Add(ctx, int64(n))
	}
}
