package runner_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/runnertest"
)

// TestApprovedCallIsOneTrace: the session's steps and one approved tool
// call, made by the agent process through the broker socket, are one
// trace under the host's trace id, with a span for every hop (the
// broker's tools/call, the pipeline's call and approval, the edge's
// exchange) chained in that order under the prompt turn; the provider
// gets the edge span's W3C trace context, which its Connection's rule
// allows; and no attribute holds the call's arguments or the credential.
func TestApprovedCallIsOneTrace(t *testing.T) {
	g, exp, tp := tracedRig(t, true)
	ctx, host := tp.Tracer("host").Start(context.Background(), "host request")
	s := g.session(t)
	v, err := s.Publish(ctx, profileDoc(`{"type": "unrestricted"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Admit(ctx, v, laneTrusted, provenance); err != nil {
		t.Fatal(err)
	}
	const title = "Found by the trace test"
	var said []string
	a, err := s.Launch(ctx, runner.LaunchConfig{Process: agentSpec(t, []runnertest.Step{{Tool: "create_issue", Arguments: map[string]any{"title": title}, Ask: true}}), OnUpdate: collect(&said)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Prompt(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	host.End()
	if g.hits.Load() != 1 || g.approvals.Load() != 1 {
		t.Fatalf("upstream hits %d, approvals %d; agent said %q", g.hits.Load(), g.approvals.Load(), said)
	}
	spans := exp.GetSpans()
	byName := map[string]tracetest.SpanStub{}
	tid := host.SpanContext().TraceID()
	for _, sp := range spans {
		if sp.SpanContext.TraceID() != tid {
			t.Errorf("span %s is in trace %s, not the host's %s", sp.Name, sp.SpanContext.TraceID(), tid)
		}
		if _, dup := byName[sp.Name]; dup && strings.HasPrefix(sp.Name, "checkfu.") && sp.Name != "checkfu.edge/send" {
			t.Errorf("two spans named %s", sp.Name)
		}
		byName[sp.Name] = sp
		for _, kv := range sp.Attributes {
			if v := kv.Value.String(); strings.Contains(v, title) || strings.Contains(v, canary[4:20]) {
				t.Errorf("span %s attribute %s holds content: %q", sp.Name, kv.Key, v)
			}
		}
	}
	for _, name := range []string{"checkfu.runner/publish", "checkfu.runner/admit", "checkfu.runner/launch", "checkfu.runner/prompt",
		"checkfu.runner/permission", "checkfu.runner/close_agent"} {
		if sp, ok := byName[name]; !ok || sp.Parent.SpanID() != host.SpanContext().SpanID() && name != "checkfu.runner/permission" {
			t.Errorf("session step %s: found %v, parent %s; want a child of the host's span", name, ok, sp.Parent.SpanID())
		}
	}
	// The hops of the call, each the child of the one before.
	chain := []string{"checkfu.runner/prompt", "checkfu.broker/tools.call", "checkfu.pipeline/call", "checkfu.pipeline/approval", "checkfu.edge/send"}
	for i := 1; i < len(chain); i++ {
		sp, ok := byName[chain[i]]
		if !ok || sp.Parent.SpanID() != byName[chain[i-1]].SpanContext.SpanID() {
			t.Errorf("hop %s: found %v, want a child of %s", chain[i], ok, chain[i-1])
		}
	}
	if p := byName["checkfu.runner/permission"]; p.Parent.SpanID() != byName["checkfu.runner/prompt"].SpanContext.SpanID() {
		t.Errorf("the permission request is not traced under the prompt turn")
	}
	call := byName["checkfu.pipeline/call"]
	for _, want := range []attribute.KeyValue{
		attribute.String("checkfu.capability", "issues.create"), attribute.String("checkfu.session", member.Session),
		attribute.String("checkfu.actor", member.Actor), attribute.String("checkfu.request", member.Request),
		attribute.String("checkfu.profile_digest", v.ProfileDigest()),
	} {
		if !slices.Contains(call.Attributes, want) {
			t.Errorf("the pipeline's span lacks %s=%s: %v", want.Key, want.Value.String(), call.Attributes)
		}
	}
	edge := byName["checkfu.edge/send"]
	if want := "00-" + tid.String() + "-" + edge.SpanContext.SpanID().String() + "-01"; g.traceparent.Load() != want {
		t.Errorf("the provider got traceparent %q, want %q", g.traceparent.Load(), want)
	}
}

// TestTraceContextOnlyOnRequestsItsRulesAllow: a Connection whose rules
// list traceparent for one request (the POST) gets no trace context on
// another (the GET), and that call still runs.
func TestTraceContextOnlyOnRequestsItsRulesAllow(t *testing.T) {
	g, _, _ := tracedRig(t, true)
	listIssuesUntraced(t, g)
}

// TestTraceContextOnlyWhereAllowed: a Connection whose rules do not
// list traceparent gets no trace context, and the call still runs.
func TestTraceContextOnlyWhereAllowed(t *testing.T) {
	g, exp, _ := tracedRig(t, false)
	listIssuesUntraced(t, g)
	if len(exp.GetSpans()) == 0 {
		t.Error("no spans recorded")
	}
}

// tracedRig is a rig whose Runner traces into an in-memory exporter;
// with postTraceparent, the Connection's POST rule (and no other) lists
// the traceparent header.
func tracedRig(t *testing.T, postTraceparent bool) (*rig, *tracetest.InMemoryExporter, *sdktrace.TracerProvider) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	g := newRig(t, func(c *runner.Config, _ *rig) {
		c.TracerProvider = tp
		if postTraceparent {
			conn := &c.Connections[0]
			conn.Rules = append([]egress.Rule(nil), conn.Rules...)
			conn.Rules[1].Headers = append(append([]string(nil), conn.Rules[1].Headers...), "Traceparent")
		}
	})
	return g, exp, tp
}

// listIssuesUntraced has an admitted session's agent list issues once,
// and fails t unless the call reached the provider without a
// traceparent header.
func listIssuesUntraced(t *testing.T, g *rig) {
	t.Helper()
	s := g.admitted(t)
	said := turn(t, s, []runnertest.Step{{Tool: "list_issues", Arguments: map[string]any{"state": "open"}}})
	if g.hits.Load() != 1 {
		t.Fatalf("upstream hits %d; agent said %q", g.hits.Load(), said)
	}
	if tp := g.traceparent.Load(); tp != "" {
		t.Errorf("the provider got traceparent %q its rules do not allow", tp)
	}
}
