package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/egress"
)

// Config configures New. Every field but Approvals, Now and Label is
// required.
type Config struct {
	Authenticator Authenticator      // establishes the request context from the server-owned token
	Assignments   *authz.Assignments // who may call what, where
	Registry      *authz.Registry    // the exact static registrations
	Connections   []edge.Connection  // one per registered credential: its egress rules
	Leases        *authz.Leases      // every call spends the channel's lease
	Approvals     *authz.Approvals   // external_effect calls run only under an approval; nil refuses them
	Edge          Edge               // the outbound edge the credential is attached at
	Evidence      authz.EvidenceSink // decision and result events
	Label         checkfu.Label      // the label on every event
	Service, Name string             // the lease scope's service and gateway fields
	Now           func() time.Time   // the clock; nil means time.Now
}

// Edge is what the gateway needs of custody's outbound edge: sending an
// authorized call, or the pinned transport of an authorized remote MCP
// tool call. [*edge.Edge] implements it. The gateway holds nothing
// more of the edge, so nothing reachable from a Gateway can open a
// credential (custody's exposure test checks it).
type Edge interface {
	Send(ctx context.Context, out edge.Outbound) (*edge.Response, error)
	Remote(ctx context.Context, out edge.Outbound) (*edge.RemoteTransport, error)
}

var _ Edge = (*edge.Edge)(nil)

// A Gateway is the capability gateway at plane authority. Every tool call
// from sandbox code reaches it over a [Channel] the Runner opened, and it
// checks, in this order and with nothing skipped:
//
//  1. the channel is one this gateway opened and has not closed (a call
//     on any other is refused with [CodeChannelUnknown] and recorded as a
//     denial that carries no request context and no actor: nothing about
//     it is authenticated); the request context is the channel's,
//     established by the Authenticator when the channel opened, never
//     anything the call carries;
//  2. the active profile lists the tool and a PermissionAssignment grants
//     the context's actor or role the capability (or its Connection) in
//     its scope ([authz.CodePermissionMissing], naming nothing);
//  3. the exact static registration: capability, tool, operation, https
//     resource and credential reference ([authz.Registry.Match]);
//  4. the arguments against the tool's JSON Schema ([authz.Registry.Arguments]),
//     and the request they make against the Connection's egress rules
//     ([edge.Connection.CheckRules], pure: nothing is sent), so that a
//     call the rules refuse spends no lease budget;
//  5. the lease is spent for the context's actor; for external_effect an
//     approval bound to exactly this actor, lease, action, effect and
//     session must exist ([authz.CodeApprovalRequired]);
//  6. the decision is recorded, and only then the call goes through
//     [edge.Edge.Send] (the rules again, no redirects, public only, credential
//     attached at the edge), or for a remote MCP tool as that server's
//     client through [edge.Edge.Remote] (the same, with the endpoint,
//     methods, headers and messages pinned), for external_effect inside
//     [authz.Approvals.Carry], which revalidates the approval
//     immediately before the effect;
//  7. the result is recorded as a separate event.
//
// Nothing before step 6 contacts a provider or opens a credential. A
// Gateway is safe for concurrent use; the zero Gateway refuses every call.
type Gateway struct {
	cfg   Config
	conns map[address.Binding]edge.Connection

	mu       sync.Mutex
	channels map[*Channel]bool // guarded by mu: open channels
}

// New validates cfg and returns a Gateway. A missing part or an invalid
// label is refused with [checkfu.CodeConfigInvalid].
func New(cfg Config) (*Gateway, error) {
	switch {
	case cfg.Authenticator == nil, cfg.Assignments == nil, cfg.Registry == nil, cfg.Leases == nil, cfg.Edge == nil, cfg.Evidence == nil:
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "gateway: New needs an Authenticator, Assignments, a Registry, Leases, an Edge and an EvidenceSink")
	case cfg.Service == "" || cfg.Name == "":
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "gateway: New needs the Service and Name its leases are scoped to")
	case !cfg.Label.Valid():
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "gateway: %s is not an evidence label", cfg.Label)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	g := &Gateway{cfg: cfg, conns: map[address.Binding]edge.Connection{}, channels: map[*Channel]bool{}}
	for _, c := range cfg.Connections {
		if c.Rules == nil || c.Credential.Validate() != nil {
			return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "gateway: a Connection needs a valid credential binding and egress rules")
		}
		g.conns[c.Credential] = c
	}
	return g, nil
}

// A ProfileTool is one tool the active profile exposes on a channel: the
// capability it calls and the descriptor's tool name, operation and
// resource, which the gateway compares with the registration on every
// call.
type ProfileTool struct {
	Capability string
	Tool       string
	Operation  string
	Resource   string
}

// A ChannelConfig is what the Runner opens a channel with: the
// server-owned token the application server presented, the session's
// lease, and the tools the active profile allows.
type ChannelConfig struct {
	Token string
	Lease string
	Tools []ProfileTool
}

// A Channel is the Runner-owned route from one sandbox's broker to the
// gateway. It carries the request context established when it opened;
// nothing sent over it can change that context.
type Channel struct {
	g     *Gateway
	rc    checkfu.RequestContext
	lease string
	tools map[string]ProfileTool
	list  []ProfileTool
}

// Open authenticates cfg.Token and opens a channel bound to the request
// context it stands for. Refusals are the Authenticator's.
func (g *Gateway) Open(ctx context.Context, cfg ChannelConfig) (*Channel, error) {
	if g == nil || g.channels == nil {
		return nil, errChannel
	}
	rc, err := g.cfg.Authenticator.Authenticate(ctx, cfg.Token)
	if err != nil {
		return nil, err
	}
	if err := rc.Validate(); err != nil {
		return nil, err
	}
	ch := &Channel{g: g, rc: rc, lease: cfg.Lease, tools: map[string]ProfileTool{}}
	for _, t := range cfg.Tools {
		if _, dup := ch.tools[t.Capability]; dup {
			return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "gateway: capability %s is listed twice", checkfu.Quote(t.Capability))
		}
		ch.tools[t.Capability] = t
		ch.list = append(ch.list, t)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.channels[ch] = true
	return ch, nil
}

// Context returns the request context the channel is bound to.
func (ch *Channel) Context() checkfu.RequestContext { return ch.rc }

// Tools returns the profile's tools on this channel, in the order given.
func (ch *Channel) Tools() []ProfileTool { return append([]ProfileTool(nil), ch.list...) }

// Registry returns the registry of the gateway the channel belongs to,
// for the broker to read descriptors from.
func (ch *Channel) Registry() *authz.Registry { return ch.g.cfg.Registry }

// Close closes the channel: every later call over it is refused with
// [CodeChannelUnknown].
func (ch *Channel) Close() {
	ch.g.mu.Lock()
	defer ch.g.mu.Unlock()
	delete(ch.g.channels, ch)
}

// Call runs one tool call from sandbox code through the gateway. Only the
// capability and the arguments come from the call.
func (ch *Channel) Call(ctx context.Context, capability string, args json.RawMessage) (*edge.Response, error) {
	if ch == nil {
		return nil, errChannel
	}
	return ch.g.call(ctx, ch, capability, args)
}

// Call runs one tool call that arrived over ch. A channel this gateway did
// not open, or has closed, is refused with [CodeChannelUnknown].
func (g *Gateway) Call(ctx context.Context, ch *Channel, capability string, args json.RawMessage) (*edge.Response, error) {
	return g.call(ctx, ch, capability, args)
}

var errChannel = checkfu.Refuse(CodeChannelUnknown, "gateway: the call did not come over an open channel of this gateway")

// authenticated reports whether ch is an open channel of g.
func (g *Gateway) authenticated(ch *Channel) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return ch.g == g && g.channels[ch]
}

func (g *Gateway) call(ctx context.Context, ch *Channel, capability string, args json.RawMessage) (*edge.Response, error) {
	// 1. The channel, and the context it carries: whatever context the
	// caller's ctx held is replaced.
	if g == nil || g.channels == nil || ch == nil || !g.authenticated(ch) {
		return nil, g.refuseChannel(ctx)
	}
	rc := ch.rc
	ctx = checkfu.WithRequestContext(ctx, rc)
	ev := authz.Evidence{Kind: authz.EvidenceGatewayDecision, Request: rc, Label: g.cfg.Label, Actor: rc.Actor, Scope: rc.Session}
	d, err := g.authorize(ch, capability, args, &ev)
	if err != nil {
		return nil, g.deny(ctx, ev, err)
	}
	ev.Outcome = authz.OutcomeApproved
	ev.Time = g.cfg.Now()
	if rerr := g.cfg.Evidence.Record(ctx, ev); rerr != nil {
		return nil, &authz.EvidenceError{Kind: ev.Kind, Err: rerr}
	}
	// 6. The effect, through the edge.
	var resp *edge.Response
	send := func(ctx context.Context) error {
		var err error
		resp, err = g.send(ctx, d.out)
		return err
	}
	if d.approval != "" {
		err = g.cfg.Approvals.Carry(ctx, d.approval, d.binding, send)
	} else {
		err = send(ctx)
	}
	// 7. The result, a separate event.
	res := ev
	res.Kind, res.Time, res.Outcome = authz.EvidenceGatewayResult, g.cfg.Now(), authz.OutcomeSucceeded
	if resp != nil {
		res.Status = resp.Status
	}
	if err != nil {
		res.Outcome = authz.OutcomeFailed
		if code, ok := checkfu.CodeOf(err); ok {
			res.Code = code
		} else if uc, ok := egress.UpstreamCodeOf(err); ok {
			res.Code = checkfu.Code(uc)
		}
	}
	if rerr := g.cfg.Evidence.Record(context.WithoutCancel(ctx), res); rerr != nil {
		return nil, errors.Join(err, &authz.EvidenceError{Kind: res.Kind, Err: rerr})
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// decided is an authorized call, ready for the edge.
type decided struct {
	out      edge.Outbound
	approval string
	binding  authz.ApprovalBinding
}

// authorize runs steps 2 to 5, filling ev as facts become known.
func (g *Gateway) authorize(ch *Channel, capability string, args json.RawMessage, ev *authz.Evidence) (decided, error) {
	rc := ch.rc
	// 2. The profile lists the tool, and an assignment grants it. Both
	// refusals are the same: a tool the profile hides is not there.
	pt, listed := ch.tools[capability]
	target := authz.PermissionTarget{Capability: capability}
	reg, registered := g.cfg.Registry.Lookup(capability)
	if registered {
		target.Connection = reg.Credential.String()
	}
	a, err := g.cfg.Assignments.Permit(rc, target, g.cfg.Now())
	if err != nil || !listed {
		return decided{}, checkfu.Refuse(authz.CodePermissionMissing, "authz: no permission assignment allows this call")
	}
	ev.Assignment = a.ID
	ev.Capability, ev.Tool = capability, pt.Tool
	// 3. The exact static registration, through the Connection of its
	// credential.
	call := authz.ToolCall{Capability: capability, Tool: pt.Tool, Operation: pt.Operation, Resource: pt.Resource, Arguments: args}
	conn, ok := g.conns[reg.Credential]
	if !registered || !ok {
		conn = edge.Connection{}
	}
	if _, err := g.cfg.Registry.Match(call, conn.Credential); err != nil {
		return decided{}, err
	}
	// 4. The arguments.
	action, err := g.cfg.Registry.Arguments(call)
	if err != nil {
		return decided{}, err
	}
	ev.Action, ev.Effect = action.Digest(), action.Effect
	// ... and the request they make, against the Connection's egress
	// rules: a pure check, so that a call the rules refuse spends no
	// lease budget. The edge decides again when it sends.
	if err := conn.CheckRules(action); err != nil {
		return decided{}, err
	}
	// 5. The lease, and for an external effect its approval.
	scope := authz.LeaseScope{Service: g.cfg.Service, Gateway: g.cfg.Name, Actor: rc.Actor}
	lease, err := g.cfg.Leases.Use(ch.lease, authz.LeaseUse{Scope: scope, Capability: capability})
	if err != nil {
		return decided{}, err
	}
	ev.Grant, ev.Provider = lease.ID, lease.Provider
	d := decided{out: edge.Outbound{Connection: conn, Action: action, Lease: lease.ID, Scope: scope}}
	if action.Effect != authz.ReadOnly {
		d.binding = authz.ApprovalBinding{Actor: rc.Actor, Grant: lease.ID, Action: action.Digest(), Effect: action.Effect, Scope: rc.Session}
		id, ok := g.cfg.Approvals.Pending(d.binding)
		if !ok {
			return decided{}, checkfu.Refuse(authz.CodeApprovalRequired, "gateway: capability %s has an external effect and runs only under an approval", checkfu.Quote(capability))
		}
		d.approval, ev.Approval = id, id
	}
	return d, nil
}

// refuseChannel records the refusal of a call that came over no open
// channel of g, and returns [CodeChannelUnknown] (joined with the
// recording failure, if any: the refusal stands either way). Nothing
// about such a call is trustworthy, the channel's context included (a
// closed channel's, or another gateway's), so the denial carries no
// request context, no actor and nothing from the call: only the code,
// the time and g's label. The zero Gateway has nowhere to record it.
func (g *Gateway) refuseChannel(ctx context.Context) error {
	if g == nil || g.channels == nil {
		return errChannel
	}
	return g.deny(ctx, authz.Evidence{Kind: authz.EvidenceGatewayDecision, Label: g.cfg.Label}, errChannel)
}

// deny records the refusal err as the decision and returns err (joined
// with the recording failure, if any).
func (g *Gateway) deny(ctx context.Context, ev authz.Evidence, err error) error {
	ev.Outcome, ev.Time = authz.OutcomeRefused, g.cfg.Now()
	ev.Code, _ = checkfu.CodeOf(err)
	if rerr := g.cfg.Evidence.Record(context.WithoutCancel(ctx), ev); rerr != nil {
		return errors.Join(err, &authz.EvidenceError{Kind: ev.Kind, Err: rerr})
	}
	return err
}
