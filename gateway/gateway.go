package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/custody/pipeline"
)

// Config configures New. Every field but Approvals, Connections, Now and
// Label is required (the zero Label is refused).
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
	// Logger receives the call pipeline's operator lines (see
	// pipeline.Config.Logger); nil discards them.
	Logger *slog.Logger
	// TracerProvider traces the call pipeline (see
	// pipeline.Config.TracerProvider); nil is the no-op provider.
	TracerProvider trace.TracerProvider
	// MeterProvider gives the call pipeline's instruments (see
	// pipeline.Config.MeterProvider); nil records nothing.
	MeterProvider metric.MeterProvider
}

// Edge is what the gateway needs of custody's outbound edge: the
// pipeline's ([pipeline.Edge]). [*edge.Edge] implements it; it takes
// only calls the pipeline authorized. The gateway holds nothing more of
// the edge, so nothing reachable from a Gateway can open a credential
// (custody's exposure test checks it).
type Edge = pipeline.Edge

// A ProfileTool is one tool the active profile exposes on a channel: the
// capability it calls and the descriptor's tool name, operation and
// resource, which the pipeline compares with the registration on every
// call.
type ProfileTool = pipeline.Tool

// A Channel is the Runner-owned route from one sandbox's broker to the
// gateway's call pipeline. It carries the request context established
// when it opened; nothing sent over it can change that context.
type Channel = pipeline.Channel

// A Gateway is the capability gateway at plane authority: it establishes
// a channel's request context from a server-owned token, and runs every
// tool call that arrives over the channel through its call pipeline
// (package custody/pipeline), which checks, in this order and with
// nothing skipped: the channel; the permission assignment; the exact
// static registration; the arguments; the Connection's egress rules; for
// external_effect, a live approval bound to exactly this call; the lease
// (spent only when the call leaves); then the edge; and records the
// decision and the result as separate events. A remote MCP tool's call
// is made at the edge step by the gateway's MCP client (package
// gateway/mcpremote) through custody's [edge.RemoteTransport].
//
// Nothing before the edge contacts a provider or opens a credential, and
// no refusal spends lease budget. A Gateway is safe for concurrent use;
// the zero Gateway refuses every call.
type Gateway struct {
	cfg Config
	p   *pipeline.Pipeline
}

// New validates cfg and returns a Gateway. A missing part or an invalid
// label is refused with [checkfu.CodeConfigInvalid].
func New(cfg Config) (*Gateway, error) {
	if cfg.Authenticator == nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "gateway: New needs an Authenticator, Assignments, a Registry, Leases, an Edge and an EvidenceSink")
	}
	p, err := pipeline.New(pipeline.Config{
		Assignments: cfg.Assignments, Registry: cfg.Registry, Connections: cfg.Connections,
		Leases: cfg.Leases, Approvals: cfg.Approvals, Edge: cfg.Edge, Remote: remoteCall,
		Evidence: cfg.Evidence, Label: cfg.Label, Service: cfg.Service, Name: cfg.Name, Now: cfg.Now,
		Logger: cfg.Logger, TracerProvider: cfg.TracerProvider, MeterProvider: cfg.MeterProvider,
	})
	if err != nil {
		return nil, err
	}
	return &Gateway{cfg: cfg, p: p}, nil
}

// A ChannelConfig is what the Runner opens a channel with: the
// server-owned token the application server presented, the session's
// lease, and the tools the active profile allows.
type ChannelConfig struct {
	Token string
	Lease string
	Tools []ProfileTool
}

// Open authenticates cfg.Token and opens a channel of the gateway's
// pipeline bound to the request context it stands for. Refusals are the
// Authenticator's.
func (g *Gateway) Open(ctx context.Context, cfg ChannelConfig) (*Channel, error) {
	if g == nil || g.p == nil {
		return nil, errChannel
	}
	rc, err := g.cfg.Authenticator.Authenticate(ctx, cfg.Token)
	if err != nil {
		return nil, err
	}
	return g.p.Open(rc, cfg.Lease, cfg.Tools)
}

// Call runs one tool call that arrived over ch. A channel this gateway did
// not open, or has closed, is refused with [pipeline.CodeChannelUnknown].
func (g *Gateway) Call(ctx context.Context, ch *Channel, capability string, args json.RawMessage) (*edge.Response, error) {
	if g == nil {
		return nil, errChannel
	}
	return g.p.Call(ctx, ch, capability, args)
}

var errChannel = checkfu.Refuse(pipeline.CodeChannelUnknown, "gateway: the call did not come over an open channel of this gateway")
