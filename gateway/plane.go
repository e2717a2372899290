package gateway

import (
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
)

// A PlaneConfig is what one plane is built from: the registrations, the
// catalog and the Connections, who may call what, the lease to issue, the
// evidence sink, and how to build the outbound edge over the plane's own
// lease book.
type PlaneConfig struct {
	Authenticator Authenticator
	Registry      *authz.Registry
	Catalog       *authz.Catalog
	Connections   []edge.Connection
	Assignments   *authz.Assignments
	// Lease is the lease the plane issues for its channels; its Scope's
	// Service and Gateway name the gateway.
	Lease authz.LeaseRequest
	// Evidence receives the gateway's decisions and results and the
	// approvals' events; Label labels them.
	Evidence authz.EvidenceSink
	Label    checkfu.Label
	Now      func() time.Time // the clock; nil means time.Now
	// Edge builds the outbound edge over the plane's lease book (for
	// [edge.NewEdge], which holds the custodian; the plane never does).
	Edge func(leases *authz.Leases) (Edge, error)
	// Logger receives the gateway's operator lines; nil discards them.
	// The edge takes its own (edge.EdgeConfig.Logger), in Edge.
	Logger *slog.Logger
	// TracerProvider traces the gateway's call pipeline; nil is the
	// no-op provider. The edge takes its own, in Edge.
	TracerProvider trace.TracerProvider
	// MeterProvider gives the gateway's call pipeline its instruments;
	// nil records nothing.
	MeterProvider metric.MeterProvider
}

// A Plane is the trusted plane's share for one session or test: its lease
// book and lease, its approvals, its outbound edge and the gateway in
// front of it. NewPlane is the one constructor the Runner, the
// conformance matrix and the test rigs build it with.
type Plane struct {
	Leases    *authz.Leases
	Lease     authz.Lease
	Approvals *authz.Approvals
	Gateway   *Gateway
	edge      Edge
}

// NewPlane builds a Plane from cfg: the lease book over cfg.Catalog and
// cfg.Registry, the lease cfg.Lease asks for, the approvals recorded in
// cfg.Evidence, the edge cfg.Edge builds, and the gateway. A missing part
// is refused with [checkfu.CodeConfigInvalid]; the rest are the refusals
// of the parts.
func NewPlane(cfg PlaneConfig) (*Plane, error) {
	if cfg.Edge == nil || cfg.Evidence == nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "gateway: NewPlane needs an Edge builder and an EvidenceSink")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	p := &Plane{}
	var err error
	if p.Leases, err = authz.NewLeases(authz.LeaseConfig{Catalog: cfg.Catalog, Registry: cfg.Registry, Now: cfg.Now}); err != nil {
		return nil, err
	}
	if p.Lease, err = p.Leases.Issue(cfg.Lease); err != nil {
		return nil, err
	}
	if p.Approvals, err = authz.NewApprovals(authz.ApprovalConfig{Evidence: cfg.Evidence, Label: cfg.Label, Now: cfg.Now}); err != nil {
		return nil, err
	}
	if p.edge, err = cfg.Edge(p.Leases); err != nil {
		return nil, err
	}
	if p.Gateway, err = New(Config{
		Authenticator: cfg.Authenticator, Assignments: cfg.Assignments, Registry: cfg.Registry, Connections: cfg.Connections,
		Leases: p.Leases, Approvals: p.Approvals, Edge: p.edge, Evidence: cfg.Evidence, Label: cfg.Label,
		Service: cfg.Lease.Scope.Service, Name: cfg.Lease.Scope.Gateway, Now: cfg.Now, Logger: cfg.Logger,
		TracerProvider: cfg.TracerProvider, MeterProvider: cfg.MeterProvider,
	}); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// Edge returns the plane's outbound edge, as the gateway sees it.
func (p *Plane) Edge() Edge { return p.edge }

// Close revokes the plane's lease and closes the edge's idle connections
// (when it has any to close). Channels already open refuse every later
// call: their lease is revoked.
func (p *Plane) Close() {
	if p == nil {
		return
	}
	if c, ok := p.edge.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
	if p.Leases != nil && p.Lease.ID != "" {
		_ = p.Leases.Revoke(p.Lease.ID)
	}
}
