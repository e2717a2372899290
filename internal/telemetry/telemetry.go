package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/checkfu/checkfu"
)

// ScopeName is the instrumentation scope of every tracer checkfu makes.
const ScopeName = "github.com/checkfu/checkfu"

// Tracer returns checkfu's tracer from tp; a nil tp gives a nil
// Tracer, with which [Start] and [StartClient] start no span at all.
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		return nil
	}
	return tp.Tracer(ScopeName)
}

// off is the span Start returns when tracing is off: it records
// nothing, and ending it ends nothing.
var off trace.Span = noop.Span{}

// Start starts the span name with t, a child of ctx's span. With a nil
// t (no provider) it returns ctx unchanged and a span that records
// nothing, allocating nothing: an embedder that sets no provider pays a
// nil check.
func Start(ctx context.Context, t trace.Tracer, name string) (context.Context, trace.Span) {
	if t == nil {
		return ctx, off
	}
	return t.Start(ctx, name)
}

// StartClient is Start for a span of kind client (a request to a
// provider).
func StartClient(ctx context.Context, t trace.Tracer, name string) (context.Context, trace.Span) {
	if t == nil {
		return ctx, off
	}
	return t.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient))
}

// The attribute keys checkfu's spans carry.
const (
	KeyTenant        = attribute.Key("checkfu.tenant")
	KeyWorkspace     = attribute.Key("checkfu.workspace")
	KeyProject       = attribute.Key("checkfu.project")
	KeySession       = attribute.Key("checkfu.session")
	KeyRequest       = attribute.Key("checkfu.request")
	KeyRun           = attribute.Key("checkfu.run")
	KeyActor         = attribute.Key("checkfu.actor")
	KeyRole          = attribute.Key("checkfu.role")
	KeyRelease       = attribute.Key("checkfu.release")
	KeyCapability    = attribute.Key("checkfu.capability")
	KeyAction        = attribute.Key("checkfu.action")
	KeyCode          = attribute.Key("checkfu.code")
	KeyProfileDigest = attribute.Key("checkfu.profile_digest")
	KeyStatus        = attribute.Key("http.response.status_code")
	KeyServer        = attribute.Key("server.address")
)

// Request returns the attributes of rc's identifiers (its empty fields
// are left out).
func Request(rc checkfu.RequestContext) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, 9)
	for _, kv := range [...]struct {
		k attribute.Key
		v string
	}{
		{KeyTenant, rc.Tenant}, {KeyWorkspace, rc.Workspace}, {KeyProject, rc.Project}, {KeySession, rc.Session},
		{KeyRequest, rc.Request}, {KeyRun, rc.Run}, {KeyActor, rc.Actor}, {KeyRole, rc.Role}, {KeyRelease, rc.Release},
	} {
		if kv.v != "" {
			out = append(out, kv.k.String(kv.v))
		}
	}
	return out
}

// End ends span; a non-empty code (a refusal or failure code, never
// an error's text) is set as the code attribute and an error status
// whose description is the code alone.
func End(span trace.Span, code string) {
	if code != "" && span.IsRecording() {
		span.SetAttributes(KeyCode.String(code))
		span.SetStatus(codes.Error, code)
	}
	span.End()
}
