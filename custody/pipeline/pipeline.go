package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/custody/internal/outbound"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/gateway/modelroute"
	"github.com/checkfu/checkfu/internal/telemetry"
)

// Config configures New. Every field but Approvals, Remote, Now and
// Connections is required.
type Config struct {
	Assignments *authz.Assignments // who may call what, where
	Registry    *authz.Registry    // the exact static registrations
	Connections []edge.Connection  // one per registered credential, at most one each: its egress rules
	Leases      *authz.Leases      // every call spends its channel's lease
	Approvals   *authz.Approvals   // external_effect calls run only under an approval; nil refuses them
	Edge        Edge               // the outbound edge the credential is attached at
	// Remote makes the tools/call of a remote MCP tool (a registration
	// of Protocol authz.MCP) through the edge's transport; nil refuses
	// every such call before it is decided. The gateway sets it to its
	// MCP client.
	Remote        RemoteClient
	Evidence      authz.EvidenceSink // decision and result events
	Label         checkfu.Label      // the label on every event
	Service, Name string             // the lease scope's service and gateway fields
	Now           func() time.Time   // the clock; nil means time.Now
	// Logger receives the operator's lines: each refusal (its code and
	// the request context's identifiers), each failed call with its
	// cause (checkfu.Cause: the dial or TLS error behind
	// upstream_failed, say), and each event that could not be recorded.
	// Nil discards them. Nothing logged is shown to the caller.
	Logger *slog.Logger
	// TracerProvider gives the tracer of the call's span
	// ("checkfu.pipeline/call", and "checkfu.pipeline/approval" around
	// an external effect's revalidation), whose attributes are the
	// request context's identifiers, the capability, the action's digest
	// and the code. Nil is the no-op provider.
	TracerProvider trace.TracerProvider
	// MeterProvider gives the instruments of every call: checkfu.calls
	// (by outcome and code), checkfu.refusals (by code) and the
	// checkfu.call.duration histogram. Nil records nothing.
	MeterProvider metric.MeterProvider
}

// Edge is what the pipeline needs of custody's outbound edge: sending an
// authorized call, or the pinned transport of an authorized remote MCP
// tool call. [*edge.Edge] implements it. Both take only an
// [edge.Authorized], which only the pipeline makes.
type Edge interface {
	Send(ctx context.Context, a edge.Authorized) (*edge.Response, error)
	Remote(ctx context.Context, a edge.Authorized) (*edge.RemoteTransport, error)
	Stream(ctx context.Context, a edge.Authorized, read func(*edge.Stream) error) error
}

var _ Edge = (*edge.Edge)(nil)

// A RemoteClient makes the one tools/call of a remote MCP tool as the
// server's client, through t (which reaches only the registered
// endpoint, lets through only that call and attaches the credential at
// the edge), and returns the answer the caller gets.
type RemoteClient func(ctx context.Context, t *edge.RemoteTransport) (*edge.Response, error)

// A Tool is one tool the active profile exposes on a channel: the
// capability it calls and the descriptor's tool name, operation and
// resource, which the pipeline compares with the registration on every
// call.
type Tool struct {
	Capability string
	Tool       string
	Operation  string
	Resource   string
}

// A Pipeline owns the order of the checks every credentialed tool call
// passes, and runs them with nothing skipped and nothing repeated:
//
//  1. channel: the call came over a [Channel] this pipeline opened and
//     has not closed (else [CodeChannelUnknown], recorded as a denial
//     that carries no request context and no actor: nothing about it is
//     authenticated); the request context is the channel's, never
//     anything the call carries;
//  2. assignment: the channel's profile lists the tool and a
//     PermissionAssignment grants the context's actor or role the
//     capability (or its Connection) in its scope
//     ([authz.CodePermissionMissing], naming nothing);
//  3. registration: the exact static registration, found once:
//     capability, tool, operation, https resource and credential
//     reference;
//  4. arguments: strict JSON satisfying the tool's JSON Schema, made
//     canonical (the action, and its one digest);
//  5. rules: the request built from the action alone, decided once by
//     the Connection's egress rules (pure: nothing is sent);
//  6. approval: for external_effect, a live approval bound to exactly
//     this actor, lease, action, effect and session
//     ([authz.CodeApprovalRequired]);
//  7. lease: the channel's lease would allow the use for the context's
//     actor; it is not spent yet;
//  8. edge: the decision is recorded; then, for external_effect inside
//     [authz.Approvals.Carry] (which revalidates the approval immediately
//     before the effect), the lease is spent, the call becomes an
//     [edge.Authorized] and goes to [edge.Edge.Send], or for a remote MCP
//     tool to the [RemoteClient] through [edge.Edge.Remote];
//  9. events: the result is recorded as a separate event.
//
// A refusal at any step spends no lease budget and opens no credential;
// nothing before step 8 contacts a provider. [Pipeline.Plan] runs steps 1
// to 5 alone, as a dry run. A Pipeline is safe for concurrent use; the
// zero Pipeline refuses every call.
type Pipeline struct {
	cfg      Config
	registry finder // cfg.Registry: every call's one lookup goes through it
	conns    map[address.Binding]edge.Connection
	tracer   trace.Tracer
	meters   *telemetry.CallMetrics

	mu       sync.Mutex
	channels map[*Channel]bool // guarded by mu: open channels
	// budgets is the model budget of each session and model capability,
	// spent by every channel of the session (one per agent). Guarded by
	// mu.
	budgets map[budgetKey]*modelroute.Meter
}

// budgetKey names a session's model budget of one capability.
type budgetKey struct{ session, capability string }

// New validates cfg and returns a Pipeline. A missing part or an invalid
// label is refused with [checkfu.CodeConfigInvalid].
func New(cfg Config) (*Pipeline, error) {
	switch {
	case cfg.Assignments == nil, cfg.Registry == nil, cfg.Leases == nil, cfg.Edge == nil, cfg.Evidence == nil:
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "pipeline: New needs Assignments, a Registry, Leases, an Edge and an EvidenceSink")
	case cfg.Service == "" || cfg.Name == "":
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "pipeline: New needs the Service and Name its leases are scoped to")
	case !cfg.Label.Valid():
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "pipeline: %s is not an evidence label", cfg.Label)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	p := &Pipeline{cfg: cfg, registry: cfg.Registry, conns: map[address.Binding]edge.Connection{}, channels: map[*Channel]bool{}, tracer: telemetry.Tracer(cfg.TracerProvider),
		meters: telemetry.NewCallMetrics(cfg.MeterProvider)}
	for _, c := range cfg.Connections {
		if c.Rules == nil || c.Credential.Validate() != nil {
			return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "pipeline: a Connection needs a valid credential binding and egress rules")
		}
		// Two Connections for one credential would leave one set of
		// egress rules silently unused: which one decides is refused as
		// ambiguous rather than chosen.
		if _, dup := p.conns[c.Credential]; dup {
			return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "pipeline: two Connections for credential %s", checkfu.Quote(c.Credential.String()))
		}
		p.conns[c.Credential] = c
	}
	return p, nil
}

// finder is what a call needs of the registry: the one lookup of its
// capability. [*authz.Registry] implements it; a test counts the
// lookups through it.
type finder interface {
	Find(capability string) (authz.Entry, bool)
}

var _ finder = (*authz.Registry)(nil)

// A Channel is the route of one caller's calls to the pipeline: the
// request context established when it opened (by the gateway, from a
// server-owned token), the lease its calls spend and the tools its
// profile lists. Nothing sent over it can change them. Every event
// recorded for a call over it names it by its ID.
type Channel struct {
	p     *Pipeline
	rc    checkfu.RequestContext
	id    string // set at Open, never reused; see ID
	lease string
	tools map[string]Tool
	list  []Tool
	// values carries rc and id over context.Background, made once at
	// Open: bind lays it over each call's context.
	values context.Context

	trace atomic.Pointer[channelTrace] // set by SetTrace
}

// channelTrace is what every span of a channel starts with: the parent
// and attributes the opener set with SetTrace, after the request
// context's identifiers. It is made once per channel (at Open when the
// pipeline traces, again at SetTrace), not per span.
type channelTrace struct {
	parent trace.SpanContext    // invalid until SetTrace
	attrs  []attribute.KeyValue // the request context's, then SetTrace's
}

// SetTrace sets the span context the channel's calls are traced under
// when their own context carries no span (sandbox code's calls cannot
// carry the host's: the opener gives the span of its step, a prompt
// turn, say), and attributes every span of the channel carries. The
// attributes must be identifiers, codes or digests, never content (the
// Runner gives the admitted profile's digest).
func (ch *Channel) SetTrace(parent trace.SpanContext, attrs ...attribute.KeyValue) {
	if ch != nil {
		ch.trace.Store(&channelTrace{parent: parent, attrs: append(telemetry.Request(ch.rc), attrs...)})
	}
}

// Span starts the span named name of one hop of a call over ch (the
// broker's tools/call), under the channel's trace parent when ctx
// carries no span, with the request context's identifiers and the
// attributes SetTrace gave. The caller ends it.
func (ch *Channel) Span(ctx context.Context, name string) (context.Context, trace.Span) {
	if ch == nil || ch.p == nil {
		return telemetry.Start(ctx, nil, name)
	}
	return ch.p.span(ctx, ch, name)
}

// span starts a span of ch's pipeline; see Channel.Span.
func (p *Pipeline) span(ctx context.Context, ch *Channel, name string) (context.Context, trace.Span) {
	if p.tracer == nil {
		return telemetry.Start(ctx, nil, name)
	}
	t := ch.trace.Load()
	if t == nil {
		t = &channelTrace{attrs: telemetry.Request(ch.rc)}
	}
	if t.parent.IsValid() && !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, t.parent)
	}
	ctx, span := telemetry.Start(ctx, p.tracer, name)
	if span.IsRecording() {
		span.SetAttributes(t.attrs...)
	}
	return ctx, span
}

// Open opens a channel bound to rc, spending lease and listing tools. The
// caller establishes rc (the gateway authenticates a token first); an
// invalid rc, or a capability listed twice, is refused.
func (p *Pipeline) Open(rc checkfu.RequestContext, lease string, tools []Tool) (*Channel, error) {
	if p == nil || p.channels == nil {
		return nil, errChannel
	}
	if err := rc.Validate(); err != nil {
		return nil, err
	}
	ch := &Channel{p: p, rc: rc, id: newChannelID(), lease: lease, tools: map[string]Tool{}}
	ch.values = authz.WithChannel(checkfu.WithRequestContext(context.Background(), rc), ch.id)
	if p.tracer != nil {
		ch.trace.Store(&channelTrace{attrs: telemetry.Request(rc)})
	}
	for _, t := range tools {
		if _, dup := ch.tools[t.Capability]; dup {
			return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "pipeline: capability %s is listed twice", checkfu.Quote(t.Capability))
		}
		ch.tools[t.Capability] = t
		ch.list = append(ch.list, t)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.channels[ch] = true
	return ch, nil
}

// Context returns the request context the channel is bound to (the
// zero RequestContext for a nil Channel).
func (ch *Channel) Context() checkfu.RequestContext {
	if ch == nil {
		return checkfu.RequestContext{}
	}
	return ch.rc
}

// ID returns the channel's identity: "ch-" and 24 hex digits drawn at
// Open, distinct for every channel of every pipeline (96 random bits).
// Every event recorded for a call over the channel names it
// (authz.Evidence's Channel, eventlog.Event's Channel), so that a
// reader puts each call in the window of the agent process the channel
// was opened for (runner opens one per agent and closes it with the
// agent), not by time. It is an identity, not an authority: knowing it
// opens nothing. A nil Channel's is "".
func (ch *Channel) ID() string {
	if ch == nil {
		return ""
	}
	return ch.id
}

// newChannelID draws a channel's ID.
func newChannelID() string {
	var b [12]byte
	rand.Read(b[:])
	return "ch-" + hex.EncodeToString(b[:])
}

// bind returns ctx carrying the channel's request context and ID, for
// every hop of one call over ch (the edge's and the approvals' evidence
// read them from it), and the evidence of the call's decision, which
// names both: the one place the events of a call over a channel begin.
func (ch *Channel) bind(ctx context.Context) (context.Context, authz.Evidence) {
	rc := ch.rc
	ctx = &boundContext{Context: ctx, values: ch.values}
	return ctx, authz.Evidence{Kind: authz.EvidenceGatewayDecision, Request: rc, Label: ch.p.cfg.Label, Actor: rc.Actor, Scope: rc.Session, Channel: ch.id}
}

// A boundContext is a call's context over a channel: the caller's
// context (its cancellation, deadline and values) with the channel's
// values (its request context and ID, made once at Open) laid over it,
// so that a request context or channel the caller's context carries is
// never the one a hop reads. It costs a call one allocation where
// layering two context.WithValue calls costs four.
type boundContext struct {
	context.Context                 // the caller's
	values          context.Context // Channel.values
}

// Value returns the channel's value for key, if it has one, and the
// caller context's otherwise.
func (c *boundContext) Value(key any) any {
	if v := c.values.Value(key); v != nil {
		return v
	}
	return c.Context.Value(key)
}

// Tools returns the profile's tools on this channel, in the order given.
func (ch *Channel) Tools() []Tool {
	if ch == nil {
		return nil
	}
	return append([]Tool(nil), ch.list...)
}

// Registry returns the registry of the pipeline the channel belongs to,
// for the broker to read descriptors from; nil for a Channel no
// pipeline opened (the nil *authz.Registry knows no capability).
func (ch *Channel) Registry() *authz.Registry {
	if ch == nil || ch.p == nil {
		return nil
	}
	return ch.p.cfg.Registry
}

// Close closes the channel: every later call over it is refused with
// [CodeChannelUnknown]. Closing a nil Channel, one no pipeline opened, or
// one already closed does nothing.
func (ch *Channel) Close() {
	if ch == nil || ch.p == nil {
		return
	}
	ch.p.mu.Lock()
	defer ch.p.mu.Unlock()
	delete(ch.p.channels, ch)
}

// Call runs one tool call over the channel through its pipeline. Only the
// capability and the arguments come from the call.
func (ch *Channel) Call(ctx context.Context, capability string, args json.RawMessage) (*edge.Response, error) {
	if ch == nil {
		return nil, errChannel
	}
	return ch.p.Call(ctx, ch, capability, args)
}

var errChannel = checkfu.Refuse(CodeChannelUnknown, "pipeline: the call did not come over an open channel of this pipeline")

// open reports whether ch is an open channel of p.
func (p *Pipeline) open(ch *Channel) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return ch.p == p && p.channels[ch]
}

// Call runs one tool call that arrived over ch through every step, in the
// order the type documentation gives. A channel this pipeline did not
// open, or has closed, is refused with [CodeChannelUnknown].
func (p *Pipeline) Call(ctx context.Context, ch *Channel, capability string, args json.RawMessage) (*edge.Response, error) {
	// 1. The channel, and the context it carries: whatever context the
	// caller's ctx held is replaced.
	if p == nil || p.channels == nil || ch == nil || !p.open(ch) {
		return nil, p.refuseChannel(ctx)
	}
	var start time.Time
	if p.meters != nil {
		start = time.Now()
	}
	ctx, span := p.span(ctx, ch, "checkfu.pipeline/call")
	resp, err := p.call(ctx, ch, capability, args)
	p.finish(ctx, span, start, err)
	return resp, err
}

// finish ends a call's span with err's code and, when metrics are on,
// counts the call by outcome (succeeded, refused, failed) and code with
// its latency since start.
func (p *Pipeline) finish(ctx context.Context, span trace.Span, start time.Time, err error) {
	code := errCode(err)
	telemetry.End(span, code)
	if p.meters == nil {
		return
	}
	outcome := "succeeded"
	if _, refused := checkfu.CodeOf(err); refused {
		outcome = "refused"
	} else if err != nil {
		outcome = "failed"
	}
	p.meters.Call(ctx, outcome, code, time.Since(start))
}

// errCode returns err's stable code for a span: its refusal or upstream
// code, evidence_unrecorded, or "failed"; "" for nil.
func errCode(err error) string {
	if err == nil {
		return ""
	}
	if c, ok := checkfu.CodeOf(err); ok {
		return string(c)
	}
	if uc, ok := egress.UpstreamCodeOf(err); ok {
		return string(uc)
	}
	var ee *authz.EvidenceError
	if errors.As(err, &ee) {
		return "evidence_unrecorded"
	}
	return "failed"
}

// call is Call past step 1, inside the call's span.
func (p *Pipeline) call(ctx context.Context, ch *Channel, capability string, args json.RawMessage) (*edge.Response, error) {
	ctx, ev := ch.bind(ctx)
	d, err := p.authorize(ch, capability, args, &ev)
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(telemetry.KeyCapability.String(ev.Capability), telemetry.KeyAction.String(ev.Action))
	}
	if err != nil {
		return nil, p.deny(ctx, ev, err)
	}
	ev.Outcome = authz.OutcomeApproved
	ev.Time = p.cfg.Now()
	if rerr := p.cfg.Evidence.Record(ctx, ev); rerr != nil {
		p.unrecorded(ctx, ev, rerr)
		return nil, &authz.EvidenceError{Kind: ev.Kind, Err: rerr}
	}
	// 8. The effect, through the edge. An answer that reports a failure
	// (an HTTP error status, a remote tool's error result) is still the
	// caller's answer, but the events record the call as failed: the
	// effect reports it to Carry as a failure, and it is not returned.
	var resp *edge.Response
	var failed error
	send := func(ctx context.Context) error {
		var err error
		resp, err = p.send(ctx, d)
		if err == nil {
			failed = answerFailed(d.protocol, resp)
			return failed
		}
		return err
	}
	if d.approval != "" {
		actx, span := telemetry.Start(ctx, p.tracer, "checkfu.pipeline/approval")
		err = p.cfg.Approvals.Carry(actx, d.approval, d.binding, send)
		telemetry.End(span, errCode(err))
	} else {
		err = send(ctx)
	}
	// 9. The result, a separate event.
	res := ev
	res.Kind, res.Time, res.Outcome = authz.EvidenceGatewayResult, p.cfg.Now(), authz.OutcomeSucceeded
	if resp != nil && d.protocol == authz.HTTPS {
		// A remote tool's answer has no status of its own (the edge_call
		// event carries its exchanges'): its result is the outcome.
		res.Status = resp.Status
	}
	if err != nil {
		res.Outcome = authz.OutcomeFailed
		if code, ok := checkfu.CodeOf(err); ok {
			res.Code = code
		} else if uc, ok := egress.UpstreamCodeOf(err); ok {
			res.Code = checkfu.Code(uc)
		}
		// The cause is the operator's: the event seals it, the log
		// shows it, and the caller gets the code alone.
		res.Cause = checkfu.Cause(err)
		if span := trace.SpanFromContext(ctx); span.IsRecording() && res.Code != "" {
			span.SetAttributes(telemetry.KeyCode.String(string(res.Code)))
		}
		p.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "pipeline: call failed", append(evidenceAttrs(res), slog.String("cause", res.Cause))...)
	}
	if rerr := p.cfg.Evidence.Record(context.WithoutCancel(ctx), res); rerr != nil {
		p.unrecorded(ctx, res, rerr)
		return nil, errors.Join(err, &authz.EvidenceError{Kind: res.Kind, Err: rerr})
	}
	if failed != nil && errors.Is(err, failed) {
		err = nil // the answer is the caller's; the events say it failed
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// answerFailed returns the failure an answer reports, or nil: an HTTP
// error status from a plain provider ([CodeProviderFailed]), or a remote
// MCP tool's result flagged isError ([CodeRemoteToolFailed]; the body is
// the gateway's MCP client's re-encoding of the result, never the
// server's bytes).
func answerFailed(protocol authz.Protocol, resp *edge.Response) error {
	if resp == nil {
		return nil
	}
	if resp.Status >= 400 {
		return checkfu.Refuse(CodeProviderFailed, "pipeline: the provider answered with status %d", resp.Status)
	}
	if protocol == authz.MCP {
		var r struct {
			IsError bool `json:"isError"`
		}
		if json.Unmarshal(resp.Body, &r) == nil && r.IsError {
			return checkfu.Refuse(CodeRemoteToolFailed, "pipeline: the remote tool returned an error result")
		}
	}
	return nil
}

// decided is a call that passed steps 2 to 7: everything the edge step
// needs, nothing spent yet.
type decided struct {
	conn     edge.Connection
	action   authz.Action
	digest   string
	tool     string         // the registration's tool name
	protocol authz.Protocol // the registration's protocol
	req      *http.Request
	allowed  egress.Allowed // req as the Connection's rules allowed it (with req only)
	lease    string
	scope    authz.LeaseScope
	session  string
	approval string
	binding  authz.ApprovalBinding
}

// resolve runs steps 2 to 5 for a call of capability over ch, filling ev
// as facts become known: the assignment, the one registry lookup (whose
// entry steps 3 and 4 resolve the call against), the arguments and the
// one rule decision. It spends nothing.
func (p *Pipeline) resolve(ch *Channel, capability string, args json.RawMessage, ev *authz.Evidence) (*decided, error) {
	rc := ch.rc
	pt, reg, registered, err := p.permit(ch, capability, ev)
	if err != nil {
		return nil, err
	}
	protocol := reg.Protocol()
	if protocol == authz.ModelAPI {
		return nil, errModelOnTools(capability)
	}
	// 3 and 4. The exact static registration, through the Connection
	// of its credential, then the arguments.
	call := authz.ToolCall{Capability: capability, Tool: pt.Tool, Operation: pt.Operation, Resource: pt.Resource, Arguments: args}
	conn, ok := p.conns[reg.Credential()]
	if !registered || !ok {
		conn = edge.Connection{}
	}
	action, err := reg.Resolve(call, conn.Credential)
	if err != nil {
		return nil, err
	}
	// Resolve held the call's tool name equal to the registration's.
	d := &decided{conn: conn, action: action, digest: action.Digest(), tool: call.Tool, protocol: protocol, lease: ch.lease, session: rc.Session,
		scope: authz.LeaseScope{Service: p.cfg.Service, Gateway: p.cfg.Name, Actor: rc.Actor}}
	ev.Action, ev.Effect = d.digest, action.Effect
	if protocol == authz.MCP && p.cfg.Remote == nil {
		return nil, checkfu.Refuse(authz.CodeCapabilityMismatch, "pipeline: capability %s is a remote MCP tool and this pipeline has no RemoteClient", checkfu.Quote(capability))
	}
	// 5. The request the action makes, against the Connection's egress
	// rules: decided once, here, so that a call the rules refuse spends
	// nothing. The edge's egress client, which holds the same rules,
	// sends what they allowed.
	req, err := outbound.Build(context.Background(), action)
	if err != nil {
		return nil, err
	}
	allowed, err := conn.Rules.Allow(req)
	if err != nil {
		return nil, err
	}
	if protocol == authz.HTTPS {
		d.req, d.allowed = req, allowed
	}
	if action.Effect != authz.ReadOnly {
		d.binding = authz.ApprovalBinding{Actor: rc.Actor, Grant: ch.lease, Action: d.digest, Effect: action.Effect, Scope: rc.Session}
	}
	return d, nil
}

// permit is step 2 for a call of capability over ch: the profile lists
// the tool, and an assignment grants it. Both refusals are the same: a
// tool the profile hides is not there. It returns the profile's tool and
// the registry's entry, if there is one (the call's one lookup), and
// fills in ev.
func (p *Pipeline) permit(ch *Channel, capability string, ev *authz.Evidence) (Tool, authz.Entry, bool, error) {
	pt, listed := ch.tools[capability]
	target := authz.PermissionTarget{Capability: capability}
	reg, registered := p.registry.Find(capability)
	if registered {
		target.Connection = reg.Connection()
	}
	a, err := p.cfg.Assignments.Permit(ch.rc, target, p.cfg.Now())
	if err != nil || !listed {
		return Tool{}, authz.Entry{}, false, checkfu.Refuse(authz.CodePermissionMissing, "authz: no permission assignment allows this call")
	}
	ev.Assignment = a.ID
	ev.Capability, ev.Tool = capability, pt.Tool
	return pt, reg, registered, nil
}

// errModelOnTools refuses a model registration called as a tool.
func errModelOnTools(capability string) error {
	return checkfu.Refuse(authz.CodeCapabilityMismatch, "pipeline: capability %s is a model route, not a tool", checkfu.Quote(capability))
}

// authorize runs steps 2 to 7, filling ev as facts become known. It
// spends nothing.
func (p *Pipeline) authorize(ch *Channel, capability string, args json.RawMessage, ev *authz.Evidence) (*decided, error) {
	d, err := p.resolve(ch, capability, args, ev)
	if err != nil {
		return nil, err
	}
	// 6. The approval, for an external effect: a live one, bound to
	// exactly this call. The agent never names it.
	if d.action.Effect != authz.ReadOnly {
		id, ok := p.cfg.Approvals.Pending(d.binding)
		if !ok {
			return nil, checkfu.Refuse(authz.CodeApprovalRequired, "pipeline: capability %s has an external effect and runs only under an approval", checkfu.Quote(capability))
		}
		d.approval, ev.Approval = id, id
	}
	// 7. The lease would allow the use; it is spent only when the call
	// leaves.
	lease, err := p.cfg.Leases.Usable(d.lease, authz.LeaseUse{Scope: d.scope, Capability: capability})
	if err != nil {
		return nil, err
	}
	ev.Grant, ev.Provider = lease.ID, lease.Provider
	return d, nil
}

// send is step 8's effect: the lease is spent, the call becomes an
// [edge.Authorized], and the edge sends it, or for a registration whose
// Protocol is [authz.MCP] the RemoteClient makes the tools/call through
// the edge's transport.
func (p *Pipeline) send(ctx context.Context, d *decided) (*edge.Response, error) {
	lease, err := p.cfg.Leases.Use(d.lease, authz.LeaseUse{Scope: d.scope, Capability: d.action.Capability})
	if err != nil {
		return nil, err
	}
	c := &outbound.Call{
		Credential: d.conn.Credential, Rules: d.conn.Rules, Action: d.action, Digest: d.digest,
		Tool: d.tool, Protocol: d.protocol, Request: d.req,
		Lease: lease, Scope: d.scope, Approval: d.approval, Session: d.session,
	}
	if d.req != nil {
		c.Allowed = &d.allowed // d.req as the rules allowed it
	}
	a := outbound.Mint(c)
	if d.protocol != authz.MCP {
		return p.cfg.Edge.Send(ctx, a)
	}
	t, err := p.cfg.Edge.Remote(ctx, a)
	if err != nil {
		return nil, err
	}
	resp, err := p.cfg.Remote(ctx, t)
	if err := t.Finish(ctx, err); err != nil {
		return nil, err
	}
	return resp, nil
}

// refuseChannel records the refusal of a call that came over no open
// channel of p, and returns [CodeChannelUnknown] (joined with the
// recording failure, if any: the refusal stands either way). Nothing
// about such a call is trustworthy, the channel's context included (a
// closed channel's, or another pipeline's), so the denial carries no
// request context, no actor and nothing from the call: only the code,
// the time and p's label. The zero Pipeline has nowhere to record it.
func (p *Pipeline) refuseChannel(ctx context.Context) error {
	if p == nil || p.channels == nil {
		return errChannel
	}
	return p.deny(ctx, authz.Evidence{Kind: authz.EvidenceGatewayDecision, Label: p.cfg.Label}, errChannel)
}

// deny records the refusal err as the decision, logs it, and returns
// err (joined with the recording failure, if any).
func (p *Pipeline) deny(ctx context.Context, ev authz.Evidence, err error) error {
	ev.Outcome, ev.Time = authz.OutcomeRefused, p.cfg.Now()
	ev.Code, _ = checkfu.CodeOf(err)
	p.meters.Refusal(ctx, string(ev.Code))
	p.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "pipeline: call refused", append(evidenceAttrs(ev), slog.String("cause", checkfu.Cause(err)))...)
	if rerr := p.cfg.Evidence.Record(context.WithoutCancel(ctx), ev); rerr != nil {
		p.unrecorded(ctx, ev, rerr)
		return errors.Join(err, &authz.EvidenceError{Kind: ev.Kind, Err: rerr})
	}
	return err
}

// unrecorded logs an event the sink could not record, with the sink's
// error as its cause.
func (p *Pipeline) unrecorded(ctx context.Context, ev authz.Evidence, rerr error) {
	p.cfg.Logger.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "pipeline: evidence not recorded",
		append(evidenceAttrs(ev), slog.String("kind", string(ev.Kind)), slog.String("cause", checkfu.Cause(rerr)))...)
}

// evidenceAttrs returns the identifiers of ev a log line carries: its
// code, capability (set once an assignment allowed it) and action
// digest, and the request context's session, request, run and actor.
// Never an argument or an answer.
func evidenceAttrs(ev authz.Evidence) []slog.Attr {
	return []slog.Attr{
		slog.String("code", string(ev.Code)), slog.String("capability", ev.Capability), slog.String("action", ev.Action),
		slog.String("session", ev.Request.Session), slog.String("request", ev.Request.Request),
		slog.String("run", ev.Request.Run), slog.String("actor", ev.Actor),
	}
}

// Refuse records err, a refusal the caller decided for a call over ch
// before the call named a capability (the broker: a message over its
// bound, a tools/call its MCP session could not take), as a refused
// decision with ch's request context and ID and err's code, and returns err
// (joined with the recording failure, if any). On a channel this pipeline
// did not open, or has closed, it records and returns what [Channel.Call]
// would: [CodeChannelUnknown], with no request context.
func (ch *Channel) Refuse(ctx context.Context, err error) error {
	if ch == nil {
		return errChannel
	}
	p := ch.p
	if p == nil || p.channels == nil || !p.open(ch) {
		return p.refuseChannel(ctx)
	}
	ctx, ev := ch.bind(ctx)
	return p.deny(ctx, ev, err)
}
