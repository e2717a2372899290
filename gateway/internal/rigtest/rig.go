// Package rigtest builds a gateway in front of a loopback TLS provider for
// the tests of package gateway and its broker: native custody holding a
// canary credential, four registrations, a lease for a non-administrator
// member, and an in-memory evidence sink.
package rigtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/custodytest"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/dnstest"
	"github.com/checkfu/checkfu/gateway"
	"github.com/checkfu/checkfu/gateway/modelroute"
)

// Canary is the provider credential; no byte of it may reach sandbox code.
const Canary = "ghp_GATEWAYCANARY0123456789abcdefXY"

// Cred is the canary's custody binding, Provider the provider revision of
// the rig's lease, and Key the HMAC key of its tokens.
var (
	Cred     = custody.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}
	Provider = checkfu.ProviderRevision{Provider: "checkfu:github", Revision: "3"}
	Key      = []byte("0123456789abcdef0123456789abcdef")
)

// Member is a non-administrator test account: a plain member of one
// project, never an admin role.
func Member() checkfu.RequestContext {
	return checkfu.RequestContext{
		Actor: "user:bob", Role: "member", Tenant: "org-1", Workspace: "ws-1", Project: "proj-1",
		Session: "sess-1", Request: "req-1", Run: "run-1", Release: "checkfu@test",
	}
}

// TB is the part of testing.TB a Rig needs, so that an Example can build
// one too.
type TB interface {
	Helper()
	Fatal(args ...any)
	Cleanup(func())
}

// A Clock is an injectable clock that moves only when told to.
type Clock struct {
	mu sync.Mutex
	t  time.Time // guarded by mu
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// countingCustodian counts Opens, so a test can prove a refused call
// never touched the credential.
type countingCustodian struct {
	custody.Custodian
	opens *atomic.Int64
}

// Open counts and opens.
func (c *countingCustodian) Open(ctx context.Context, b custody.Binding) (*custody.Secret, error) {
	c.opens.Add(1)
	return c.Custodian.Open(ctx, b)
}

// A Rig is a gateway in front of a loopback TLS provider reached as
// api.example.com, with native custody holding the canary.
type Rig struct {
	// T is the test the rig belongs to; Hits counts requests the
	// provider received. The rest are the parts the gateway is built of.
	T           TB
	Clock       *Clock
	Base        string
	Registry    *authz.Registry
	Leases      *authz.Leases
	Approvals   *authz.Approvals
	Assignments *authz.Assignments
	Evidence    *custodytest.MemoryEvidence
	// EdgeEvidence holds the edge_call events of the rig's Edge, apart
	// from the gateway's and the approvals' events in Evidence; a
	// NewRemote rig records them in Evidence instead.
	EdgeEvidence *custodytest.MemoryEvidence
	// Opens counts the credential's opens by the custodian.
	Opens *atomic.Int64
	// Plane is the rig's plane, built by gateway.NewPlane; Edge is its
	// outbound edge, as the gateway sees it (it cannot open the
	// credential for a caller).
	Plane   *gateway.Plane
	Edge    gateway.Edge
	Conn    edge.Connection
	Gateway *gateway.Gateway
	Tokens  *gateway.HMACTokens
	Lease   authz.Lease
	Tools   []gateway.ProfileTool
	Hits    atomic.Int64
	// Hold, when set, is called with each request the provider
	// receives before it answers: a test holds calls in flight with it.
	Hold atomic.Pointer[func(*http.Request)]
	// Remote is the remote MCP server of a rig built by NewRemote.
	Remote *Remote
	// Model is the scripted model server of a rig built by NewModel,
	// and ModelConn the Connection of its key.
	Model     *Model
	ModelConn edge.Connection
}

// ListSchema is the input schema of list_issues.
const ListSchema = `{"type":"object","properties":{"state":{"enum":["open","closed"]}},"additionalProperties":false}`

// CreateSchema is the input schema of create_issue.
const CreateSchema = `{"type":"object","properties":{"title":{"type":"string","maxLength":64}},"required":["title"],"additionalProperties":false}`

// New builds a Rig; everything it starts stops with t.
func New(t TB) *Rig {
	t.Helper()
	return build(t, false, nil)
}

// NewModel builds a Rig that also registers a model route
// (ModelCapability: Anthropic Messages at the scripted model server
// [Model], AllowedModel only, a budget of ModelRequests requests and
// ModelTokens tokens per channel) on its own key, ModelCanary, and lists
// it on every channel after the four plain tools. Its edge records its
// edge_call events in Evidence too.
func NewModel(t TB) *Rig {
	t.Helper()
	return build(t, false, &modelroute.Budget{Requests: ModelRequests, Tokens: ModelTokens})
}

// NewModelBudget is NewModel with another budget per channel.
func NewModelBudget(t TB, b modelroute.Budget) *Rig {
	t.Helper()
	return build(t, false, &b)
}

// NewRemote builds a Rig that also registers the tools of a remote MCP
// server (see [Remote]) on the same credential, and lists them on every
// channel after the four plain tools. Its edge records its edge_call
// events in Evidence too.
func NewRemote(t TB) *Rig {
	t.Helper()
	return build(t, true, nil)
}

// NewTraced builds a Rig as New does, whose gateway and edge trace with
// tp.
func NewTraced(t TB, tp trace.TracerProvider) *Rig {
	t.Helper()
	return build(t, false, nil, Telemetry{Tracer: tp})
}

// NewModelTraced builds a Rig as NewModel does, whose gateway and edge
// trace with tp.
func NewModelTraced(t TB, tp trace.TracerProvider) *Rig {
	t.Helper()
	return build(t, false, &modelroute.Budget{Requests: ModelRequests, Tokens: ModelTokens}, Telemetry{Tracer: tp})
}

// Telemetry is what a traced or metered rig reports to.
type Telemetry struct {
	Tracer trace.TracerProvider
	Meter  metric.MeterProvider
}

// NewModelMetered builds a Rig as NewModel does, whose gateway records
// its instruments with mp.
func NewModelMetered(t TB, mp metric.MeterProvider) *Rig {
	t.Helper()
	return build(t, false, &modelroute.Budget{Requests: ModelRequests, Tokens: ModelTokens}, Telemetry{Meter: mp})
}

// build builds a rig; a model budget adds the model routes with it, and
// a TracerProvider traces its gateway and edge.
func build(t TB, remote bool, budget *modelroute.Budget, tel ...Telemetry) *Rig {
	var tp trace.TracerProvider
	var mp metric.MeterProvider
	if len(tel) > 0 {
		tp, mp = tel[0].Tracer, tel[0].Meter
	}
	model := budget != nil
	t.Helper()
	r := &Rig{T: t, Clock: &Clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}, Evidence: &custodytest.MemoryEvidence{}, EdgeEvidence: &custodytest.MemoryEvidence{}, Assignments: &authz.Assignments{}}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.Hits.Add(1)
		if hold := r.Hold.Load(); hold != nil {
			(*hold)(req)
		}
		io.Copy(io.Discard, req.Body)
		switch req.URL.Path {
		case "/v1/echo":
			fmt.Fprintf(w, `{"you_sent":%q}`, req.Header.Get("Authorization"))
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"issues":[{"n":1}]}`)
		}
	}))
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).AddrPort().Port()
	r.Base = "https://api.example.com:" + strconv.Itoa(int(port))
	dns, err := dnstest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dns.Close() })
	dns.Set("api.example.com", netip.MustParseAddr("127.0.0.1"))
	var remoteRules []egress.Rule
	if remote {
		var rsrv *httptest.Server
		r.Remote, rsrv, _ = startRemote(t)
		dns.Set("mcp.example.com", netip.MustParseAddr("127.0.0.1"))
		dns.Set("other.example.com", netip.MustParseAddr("127.0.0.1"))
		remoteRules = r.Remote.rules(rsrv.Listener.Addr().(*net.TCPAddr).AddrPort().Port())
	}
	var modelSrv *httptest.Server
	if model {
		r.Model, modelSrv = startModel(t)
		r.Model.Base = "https://model.example.com:" + strconv.Itoa(int(modelSrv.Listener.Addr().(*net.TCPAddr).AddrPort().Port()))
		dns.Set("model.example.com", netip.MustParseAddr("127.0.0.1"))
	}
	dialer, err := egress.NewDialer(egress.DialerConfig{Resolver: dns.Addr(), TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	native := custody.NewNative(custody.GenerateKeyset(), custody.NewMemoryStore())
	if err := native.Put(context.Background(), Cred, custody.NewSecret([]byte(Canary))); err != nil {
		t.Fatal(err)
	}
	if model {
		if err := native.Put(context.Background(), ModelCred, custody.NewSecret([]byte(ModelCanary))); err != nil {
			t.Fatal(err)
		}
	}
	r.Opens = new(atomic.Int64)
	custodian := &countingCustodian{Custodian: native, opens: r.Opens}
	regs := []authz.Registration{
		{Capability: "issues.list", Operation: "GET", Resource: r.Base + "/v1/repos/acme/app/issues", Credential: Cred, Effect: authz.ReadOnly,
			Tool: authz.ToolDescriptor{Name: "list_issues", Description: "List the issues of acme/app.", InputSchema: json.RawMessage(ListSchema)}},
		{Capability: "issues.create", Operation: "POST", Resource: r.Base + "/v1/repos/acme/app/issues", Credential: Cred, Effect: authz.ExternalEffect,
			Tool: authz.ToolDescriptor{Name: "create_issue", Description: "Open an issue on acme/app.", InputSchema: json.RawMessage(CreateSchema)}},
		{Capability: "echo", Operation: "GET", Resource: r.Base + "/v1/echo", Credential: Cred, Effect: authz.ReadOnly,
			Tool: authz.ToolDescriptor{Name: "echo", Description: "A provider that echoes the credential.", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		{Capability: "outside.rules", Operation: "GET", Resource: r.Base + "/v2/other", Credential: Cred, Effect: authz.ReadOnly,
			Tool: authz.ToolDescriptor{Name: "outside", Description: "A resource the rules do not allow.", InputSchema: json.RawMessage(`{"type":"object"}`)}},
	}
	if remote {
		regs = append(regs, r.Remote.registrations()...)
	}
	if model {
		regs = append(regs, modelRegistrations(r.Model.Base, budget)...)
	}
	if r.Registry, err = authz.NewRegistry(regs...); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, reg := range regs {
		ids = append(ids, reg.Capability)
		r.Tools = append(r.Tools, gateway.ProfileTool{Capability: reg.Capability, Tool: reg.Tool.Name, Operation: reg.Operation, Resource: reg.Resource})
	}
	cat, err := authz.NewCatalog(authz.ProviderEntry{Revision: Provider, Capabilities: ids})
	if err != nil {
		t.Fatal(err)
	}
	rules, err := egress.NewRules(append([]egress.Rule{{Host: "api.example.com", Port: port, PathPrefix: "/v1", Methods: []string{"GET", "POST"}, Headers: []string{"Content-Type"}}}, remoteRules...))
	if err != nil {
		t.Fatal(err)
	}
	r.Conn = edge.Connection{Credential: Cred, Rules: rules}
	conns := []edge.Connection{r.Conn}
	if model {
		mrules, err := modelRules(modelSrv.Listener.Addr().(*net.TCPAddr).AddrPort().Port())
		if err != nil {
			t.Fatal(err)
		}
		r.ModelConn = edge.Connection{Credential: ModelCred, Rules: mrules}
		conns = append(conns, r.ModelConn)
	}
	// Every httptest TLS server shares one certificate: one pool trusts
	// them all.
	rootCAs := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	var edgeEvidence authz.EvidenceSink = r.EdgeEvidence
	if remote || model {
		edgeEvidence = r.Evidence // the edge's own edge_call events, with the gateway's
	}
	if r.Tokens, err = gateway.NewHMACTokens(Key, r.Clock.Now); err != nil {
		t.Fatal(err)
	}
	scope := authz.LeaseScope{Service: "runner", Gateway: "gateway-a", Actor: Member().Actor}
	r.Plane, err = gateway.NewPlane(gateway.PlaneConfig{
		Authenticator: r.Tokens, Registry: r.Registry, Catalog: cat, Connections: conns, Assignments: r.Assignments,
		Lease:    authz.LeaseRequest{Provider: Provider, Capabilities: ids, Scope: scope, Budget: 1 << 20, TTL: time.Hour},
		Evidence: r.Evidence, Label: checkfu.LabelMock, Now: r.Clock.Now, TracerProvider: tp, MeterProvider: mp,
		Edge: func(leases *authz.Leases) (gateway.Edge, error) {
			e, err := edge.NewEdge(edge.EdgeConfig{
				Leases: leases, Custodian: custodian, Label: checkfu.LabelMock, Now: r.Clock.Now,
				Evidence: edgeEvidence, Dialer: dialer, RootCAs: rootCAs, TracerProvider: tp,
			})
			if err != nil {
				return nil, err
			}
			return e, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Plane.Close)
	r.Leases, r.Lease, r.Approvals, r.Gateway, r.Edge = r.Plane.Leases, r.Plane.Lease, r.Plane.Approvals, r.Plane.Gateway, r.Plane.Edge()
	return r
}

// Grant assigns capability to the member's actor in its project.
func (r *Rig) Grant(capability string) authz.PermissionAssignment {
	r.T.Helper()
	rc := Member()
	a, err := r.Assignments.Assign(authz.PermissionAssignment{Actor: rc.Actor, Capability: capability, Tenant: rc.Tenant, Workspace: rc.Workspace, Project: rc.Project, ExpiresAt: r.Clock.Now().Add(time.Hour)})
	if err != nil {
		r.T.Fatal(err)
	}
	return a
}

// Channel opens a channel for rc with the rig's lease and every tool.
func (r *Rig) Channel(rc checkfu.RequestContext) *gateway.Channel {
	r.T.Helper()
	tok, err := r.Tokens.Issue(rc, time.Minute)
	if err != nil {
		r.T.Fatal(err)
	}
	ch, err := r.Gateway.Open(context.Background(), gateway.ChannelConfig{Token: tok, Lease: r.Lease.ID, Tools: r.Tools})
	if err != nil {
		r.T.Fatal(err)
	}
	return ch
}

// Approver is the request context of the approver the rig's approvals
// come from: another actor of the member's tenant and workspace.
func Approver() checkfu.RequestContext {
	return checkfu.RequestContext{
		Actor: "user:carol", Role: "approver", Tenant: "org-1", Workspace: "ws-1", Project: "proj-1",
		Session: "sess-approver", Request: "req-approve", Release: "checkfu@test",
	}
}

// Approve records an approval of the create call, as the platform would:
// under the approver's own request context.
func (r *Rig) Approve(args string) {
	r.T.Helper()
	r.ApproveCall("issues.create", args)
}

// ApproveCall records an approval of a call of capability with args,
// under the approver's own request context.
func (r *Rig) ApproveCall(capability, args string) {
	r.T.Helper()
	r.approve(checkfu.WithRequestContext(context.Background(), Approver()), r.Approvals, capability, args)
}

// ApproveWith is Approve through approvals, deciding with ctx (and the
// request context it carries).
func (r *Rig) ApproveWith(ctx context.Context, approvals *authz.Approvals, args string) {
	r.T.Helper()
	r.approve(ctx, approvals, "issues.create", args)
}

func (r *Rig) approve(ctx context.Context, approvals *authz.Approvals, capability, args string) {
	r.T.Helper()
	reg, _ := r.Registry.Lookup(capability)
	action, err := r.Registry.Resolve(authz.ToolCall{Capability: capability, Tool: reg.Tool.Name, Operation: reg.Operation, Resource: reg.Resource, Arguments: json.RawMessage(args)}, reg.Credential)
	if err != nil {
		r.T.Fatal(err)
	}
	if _, err := approvals.Decide(ctx, authz.ApprovalDecision{
		Binding:  authz.ApprovalBinding{Actor: Member().Actor, Grant: r.Lease.ID, Action: action.Digest(), Effect: action.Effect, Scope: Member().Session},
		Approver: "user:carol", Approve: true, TTL: time.Minute,
	}); err != nil {
		r.T.Fatal(err)
	}
}
