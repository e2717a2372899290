package pipeline

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/custody/internal/outbound"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/gateway/modelroute"
)

// A ModelCall is an agent's own model request as the broker read it off
// the sandbox's socket: the method, path and query it asked for, its
// headers (the dialect keeps a few; every credential- or routing-bearing
// one is dropped) and its body, read whole up to
// [modelroute.MaxRequestBytes] (one byte more is refused as invalid).
type ModelCall struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   []byte
}

// Model runs an agent's own model call over ch through the pipeline, as
// a call of capability, a registration of Protocol [authz.ModelAPI], and
// writes the provider's answer to w as it arrives. The steps are a tool
// call's, with the model route's checks in the place of the arguments:
//
//  1. channel, as for [Channel.Call] ([CodeChannelUnknown]);
//  2. assignment: the profile lists the capability and an assignment
//     grants it ([authz.CodePermissionMissing]);
//  3. registration: a model registration whose resource is the
//     profile's ([authz.CodeCapabilityMismatch]);
//  4. request: POST on one of the dialect's paths (its one path, or
//     Anthropic Messages' token count, or Gemini's
//     /v1beta/models/{model}:{method} with the model read from the path,
//     [modelroute.Dialect.Serves]), no query (Gemini's stream: alt=sse
//     alone), a strict JSON body naming a model
//     ([modelroute.CodeModelPathRefused],
//     [modelroute.CodeModelRequestInvalid]);
//  5. model: exactly one of the registration's models
//     ([modelroute.CodeModelNotAllowed]);
//  6. rules: the request to the registered resource (for a token count,
//     the resource followed by "/count_tokens"; for Gemini, followed by
//     the checked model and method, [modelroute.Request.Upstream]; never
//     a path the agent chose), with
//     the headers the dialect keeps, decided by the Connection's egress
//     rules, once: the edge sends what they allowed
//     ([egress.Rules.Allow], [egress.Client.Send]);
//  7. budget: the session's model budget for the capability (shared by
//     every channel of the session), in requests and in tokens
//     ([modelroute.CodeModelBudgetExhausted]), is not spent;
//  8. lease: the channel's lease would allow the use;
//  9. edge: the decision is recorded; the budget reserves one request
//     and holds the most the call may spend until it settles (waiting
//     while calls in flight hold what is left,
//     [modelroute.Meter.Reserve]), the lease is spent, and the edge
//     attaches the model key in the
//     dialect's header and sends; the answer is relayed as it arrives,
//     each event screened for the key ([edge.Stream.Screen]);
//  10. events: the result, a model_result event with the model, the
//     tokens charged to the budget, the status and the duration. The
//     tokens are those the provider reported; a 2xx answer that ended
//     without its final usage (the agent hung up, the provider cut or
//     reported none) is charged at least the request's own output cap,
//     or the rest of the budget when it named none
//     ([modelroute.Meter.Settle]). A token count spends one request of
//     the budget and holds and is charged no tokens (0 in its event):
//     the provider generates nothing for it.
//
// A refusal at any step before 9 writes nothing to w, spends nothing and
// opens no credential; the caller answers the agent. Once the answer's
// status is written, an error means the answer was cut short. Neither
// the prompt nor the completion is kept or recorded.
//
// The call runs in the span checkfu.pipeline/model (under the channel's
// trace parent), and counts in the call metrics as a call.
func (ch *Channel) Model(ctx context.Context, capability string, call ModelCall, w http.ResponseWriter) error {
	if ch == nil || ch.p == nil || ch.p.channels == nil || !ch.p.open(ch) {
		return ch.model(ctx, capability, call, w)
	}
	p := ch.p
	var start time.Time
	if p.meters != nil {
		start = time.Now()
	}
	ctx, span := p.span(ctx, ch, "checkfu.pipeline/model")
	err := ch.model(ctx, capability, call, w)
	p.finish(ctx, span, start, err)
	return err
}

// model is Model inside its span.
func (ch *Channel) model(ctx context.Context, capability string, call ModelCall, w http.ResponseWriter) error {
	if ch == nil {
		return errChannel
	}
	p := ch.p
	if p == nil || p.channels == nil || !p.open(ch) {
		return p.refuseChannel(ctx)
	}
	ctx, ev := ch.bind(ctx)
	d, err := p.authorizeModel(ch, capability, call, &ev)
	if err != nil {
		return p.deny(ctx, ev, err)
	}
	start := p.cfg.Now()
	ev.Outcome, ev.Time = authz.OutcomeApproved, start
	if rerr := p.cfg.Evidence.Record(ctx, ev); rerr != nil {
		p.unrecorded(ctx, ev, rerr)
		return &authz.EvidenceError{Kind: ev.Kind, Err: rerr}
	}
	// 9. The effect: the budget and the lease are spent as the call
	// leaves, and the answer is relayed as it arrives.
	var (
		status int
		usage  modelroute.Usage
	)
	err = p.sendModel(ctx, d, func(s *edge.Stream) error {
		status = s.Status
		if ct := s.Header.Get("Content-Type"); ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		w.WriteHeader(s.Status)
		var err error
		if mt, _, _ := mime.ParseMediaType(s.Header.Get("Content-Type")); mt == "text/event-stream" {
			rc := http.NewResponseController(w)
			usage, err = modelroute.Relay(w, func() { _ = rc.Flush() }, s.Body, d.dialect, s.Screen)
		} else {
			usage, err = modelroute.RelayAnswer(w, s.Body, d.dialect, s.Screen)
		}
		return err
	})
	if d.held {
		charge := status
		if charge == 0 && ctx.Err() != nil {
			// The agent hung up on a request the provider may already
			// have read (and bills): charged as an answer cut short.
			charge = http.StatusOK
		}
		usage = d.meter.Settle(d.request, d.hold, charge, usage)
	}
	if err == nil && status >= 400 {
		err = checkfu.Refuse(CodeProviderFailed, "pipeline: the model provider answered with status %d", status)
	}
	// 10. The result, a separate event.
	res := ev
	res.Kind, res.Time, res.Outcome = authz.EvidenceModelResult, p.cfg.Now(), authz.OutcomeSucceeded
	res.Status, res.InputTokens, res.OutputTokens = status, usage.InputTokens, usage.OutputTokens
	p.meters.Tokens(ctx, usage.InputTokens, usage.OutputTokens)
	res.Duration = res.Time.Sub(start)
	if err != nil {
		res.Outcome = authz.OutcomeFailed
		if status == 0 {
			res.Outcome = authz.OutcomeRefused // nothing reached the agent
		}
		if code, ok := checkfu.CodeOf(err); ok {
			res.Code = code
		} else if uc, ok := egress.UpstreamCodeOf(err); ok {
			res.Code = checkfu.Code(uc)
		}
		// The cause is the operator's, as for a tool call.
		res.Cause = checkfu.Cause(err)
		p.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "pipeline: model call failed", append(evidenceAttrs(res), slog.String("cause", res.Cause))...)
	}
	if rerr := p.cfg.Evidence.Record(context.WithoutCancel(ctx), res); rerr != nil {
		p.unrecorded(ctx, res, rerr)
		return errors.Join(err, &authz.EvidenceError{Kind: res.Kind, Err: rerr})
	}
	if errors.Is(err, CodeProviderFailed) {
		return nil // the provider's answer was the agent's; the event says it failed
	}
	return err
}

// modelDecided is a model call that passed steps 2 to 8.
type modelDecided struct {
	decided
	dialect modelroute.Dialect
	request modelroute.Request
	meter   *modelroute.Meter
	// hold is what the meter held for the call, once held is set.
	hold int64
	held bool
}

// authorizeModel runs steps 2 to 8 of [Channel.Model], filling ev as
// facts become known. It spends nothing.
func (p *Pipeline) authorizeModel(ch *Channel, capability string, call ModelCall, ev *authz.Evidence) (*modelDecided, error) {
	rc := ch.rc
	// 2. The assignment.
	pt, entry, registered, err := p.permit(ch, capability, ev)
	ev.Tool = "" // a model call's events name the model, once it is read
	if err != nil {
		return nil, err
	}
	reg := entry.Registration()
	// 3. The registration: a model route, exactly the profile's, with a
	// Connection.
	conn, ok := p.conns[reg.Credential]
	if !registered || !ok || reg.Protocol != authz.ModelAPI || pt.Tool != reg.Tool.Name || pt.Operation != reg.Operation || pt.Resource != reg.Resource {
		return nil, checkfu.Refuse(authz.CodeCapabilityMismatch, "pipeline: capability %s is not a model route of this channel", checkfu.Quote(capability))
	}
	// 4. The request.
	dialect := reg.Model.Dialect
	req, err := modelroute.ParseRequest(dialect, call.Method, call.Path, call.RawQuery, call.Body)
	if err != nil {
		return nil, err
	}
	// 5. The model. A refused one is the agent's own text: it is
	// recorded by its code alone, never by name.
	if err := (modelroute.Policy{Models: reg.Model.Models}).Check(req); err != nil {
		return nil, err
	}
	if authz.ValidModelName(req.Model) {
		ev.Tool, ev.Model = req.Model, req.Model
	}
	// The action is the request the route sends: the registered
	// resource, or its token count's (never a path the agent chose).
	action := authz.Action{Capability: capability, Operation: reg.Operation, Resource: req.Upstream(reg.Resource), Effect: reg.Effect, Body: bytes.Clone(call.Body)}
	d := &modelDecided{decided: decided{conn: conn, action: action, digest: action.Digest(), tool: reg.Tool.Name, protocol: reg.Protocol, lease: ch.lease, session: rc.Session,
		scope: authz.LeaseScope{Service: p.cfg.Service, Gateway: p.cfg.Name, Actor: rc.Actor}}, dialect: dialect, request: req}
	ev.Action, ev.Effect = d.digest, action.Effect
	// 6. The rules decide the request the route will send: once, here,
	// so that a request they refuse spends nothing. The edge's egress
	// client, which holds the same rules, sends what they allowed.
	hreq, err := http.NewRequestWithContext(context.Background(), reg.Operation, d.action.Resource, bytes.NewReader(d.action.Body))
	if err != nil {
		return nil, checkfu.Refuse(authz.CodeCapabilityMismatch, "pipeline: capability %s: the registered resource does not form a request", checkfu.Quote(capability))
	}
	hreq.Header = req.Headers(call.Header)
	allowed, err := conn.Rules.Allow(hreq)
	if err != nil {
		return nil, err
	}
	d.req, d.allowed = hreq, allowed
	// 7. The budget.
	d.meter = p.meter(rc.Session, capability, reg.Model)
	if err := d.meter.Allow(); err != nil {
		return nil, err
	}
	// 8. The lease would allow the use.
	lease, err := p.cfg.Leases.Usable(d.lease, authz.LeaseUse{Scope: d.scope, Capability: capability})
	if err != nil {
		return nil, err
	}
	ev.Grant, ev.Provider = lease.ID, lease.Provider
	return d, nil
}

// sendModel is step 9's effect: one request of the budget is reserved
// with the call's hold, the lease is spent (a refusal gives the
// reservation back; otherwise d.hold and d.held are set and the caller
// settles it), and the edge sends the call with the model key in the
// dialect's header and hands its answer to read.
func (p *Pipeline) sendModel(ctx context.Context, d *modelDecided, read func(*edge.Stream) error) error {
	hold := d.meter.Hold(d.request, len(d.action.Body))
	if err := d.meter.Reserve(ctx, hold); err != nil {
		return err
	}
	lease, err := p.cfg.Leases.Use(d.lease, authz.LeaseUse{Scope: d.scope, Capability: d.action.Capability})
	if err != nil {
		// Refused before anything left (the lease revoked, out of time
		// or spent while the call waited in Reserve): it spends nothing.
		d.meter.Release(hold)
		return err
	}
	d.hold, d.held = hold, true
	header, prefix := d.dialect.KeyHeader(), ""
	if header == "Authorization" {
		prefix = "Bearer "
	}
	a := outbound.Mint(&outbound.Call{
		Credential: d.conn.Credential, Rules: d.conn.Rules, Action: d.action, Digest: d.digest,
		Tool: d.tool, Protocol: d.protocol, Request: d.req, Allowed: &d.allowed,
		Lease: lease, Scope: d.scope, Session: d.session, KeyHeader: header, KeyPrefix: prefix,
	})
	return p.cfg.Edge.Stream(ctx, a, read)
}

// meter returns the meter of capability's model budget for session,
// making it on first use. Every channel of the session (one per agent)
// spends the same budget: an agent launched later, or again, starts
// with what the session has left.
func (p *Pipeline) meter(session, capability string, route authz.ModelRoute) *modelroute.Meter {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.budgets == nil {
		p.budgets = map[budgetKey]*modelroute.Meter{}
	}
	k := budgetKey{session, capability}
	m, ok := p.budgets[k]
	if !ok {
		m = modelroute.NewMeter(modelroute.Budget{Requests: route.Requests, Tokens: route.Tokens})
		p.budgets[k] = m
	}
	return m
}
