package gateway_test

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
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/custodytest"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/gateway"
	"github.com/checkfu/checkfu/internal/dnstest"
)

// canary is the provider credential; no byte of it may reach sandbox code.
const canary = "ghp_GATEWAYCANARY0123456789abcdefXY"

var (
	rigCred     = custody.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}
	rigProvider = checkfu.ProviderRevision{Provider: "checkfu:github", Revision: "3"}
	rigKey      = []byte("0123456789abcdef0123456789abcdef")
)

// member is a non-administrator test account: a plain member of one
// project, never an admin role.
func member() checkfu.RequestContext {
	return checkfu.RequestContext{
		Actor: "user:bob", Role: "member", Tenant: "org-1", Workspace: "ws-1", Project: "proj-1",
		Session: "sess-1", Request: "req-1", Run: "run-1", Release: "checkfu@test",
	}
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type countingCustodian struct {
	custody.Custodian
	opens atomic.Int64
}

func (c *countingCustodian) Open(ctx context.Context, b custody.Binding) (*custody.Secret, error) {
	c.opens.Add(1)
	return c.Custodian.Open(ctx, b)
}

// A rig is a gateway in front of a loopback TLS provider reached as
// api.example.com, with native custody holding the canary.
type rig struct {
	t           testing.TB
	clock       *clock
	base        string
	registry    *authz.Registry
	leases      *authz.Leases
	approvals   *authz.Approvals
	assignments *authz.Assignments
	evidence    *custodytest.MemoryEvidence
	custodian   *countingCustodian
	edge        *edge.Edge
	conn        edge.Connection
	gw          *gateway.Gateway
	tokens      *gateway.HMACTokens
	lease       authz.Lease
	tools       []gateway.ProfileTool
	hits        atomic.Int64
}

const listSchema = `{"type":"object","properties":{"state":{"enum":["open","closed"]}},"additionalProperties":false}`
const createSchema = `{"type":"object","properties":{"title":{"type":"string","maxLength":64}},"required":["title"],"additionalProperties":false}`

func newRig(t testing.TB) *rig {
	t.Helper()
	r := &rig{t: t, clock: &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}, evidence: &custodytest.MemoryEvidence{}, assignments: &authz.Assignments{}}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.hits.Add(1)
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
	r.base = "https://api.example.com:" + strconv.Itoa(int(port))
	dns, err := dnstest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dns.Close() })
	dns.Set("api.example.com", netip.MustParseAddr("127.0.0.1"))
	dialer, err := egress.NewDialer(egress.DialerConfig{Resolver: dns.Addr(), TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	native := custody.NewNative(custody.GenerateKeyset(), custody.NewMemoryStore())
	if err := native.Put(context.Background(), rigCred, custody.NewSecret([]byte(canary))); err != nil {
		t.Fatal(err)
	}
	r.custodian = &countingCustodian{Custodian: native}
	regs := []authz.Registration{
		{Capability: "issues.list", Operation: "GET", Resource: r.base + "/v1/repos/acme/app/issues", Credential: rigCred, Effect: authz.ReadOnly,
			Tool: authz.ToolDescriptor{Name: "list_issues", Description: "List the issues of acme/app.", InputSchema: json.RawMessage(listSchema)}},
		{Capability: "issues.create", Operation: "POST", Resource: r.base + "/v1/repos/acme/app/issues", Credential: rigCred, Effect: authz.ExternalEffect,
			Tool: authz.ToolDescriptor{Name: "create_issue", Description: "Open an issue on acme/app.", InputSchema: json.RawMessage(createSchema)}},
		{Capability: "echo", Operation: "GET", Resource: r.base + "/v1/echo", Credential: rigCred, Effect: authz.ReadOnly,
			Tool: authz.ToolDescriptor{Name: "echo", Description: "A provider that echoes the credential.", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		{Capability: "outside.rules", Operation: "GET", Resource: r.base + "/v2/other", Credential: rigCred, Effect: authz.ReadOnly,
			Tool: authz.ToolDescriptor{Name: "outside", Description: "A resource the rules do not allow.", InputSchema: json.RawMessage(`{"type":"object"}`)}},
	}
	if r.registry, err = authz.NewRegistry(regs...); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, reg := range regs {
		ids = append(ids, reg.Capability)
		r.tools = append(r.tools, gateway.ProfileTool{Capability: reg.Capability, Tool: reg.Tool.Name, Operation: reg.Operation, Resource: reg.Resource})
	}
	cat, err := authz.NewCatalog(authz.ProviderEntry{Revision: rigProvider, Capabilities: ids})
	if err != nil {
		t.Fatal(err)
	}
	if r.leases, err = authz.NewLeases(authz.LeaseConfig{Catalog: cat, Registry: r.registry, Now: r.clock.Now}); err != nil {
		t.Fatal(err)
	}
	if r.approvals, err = authz.NewApprovals(authz.ApprovalConfig{Evidence: r.evidence, Label: checkfu.LabelMock, Now: r.clock.Now}); err != nil {
		t.Fatal(err)
	}
	scope := authz.LeaseScope{Service: "runner", Gateway: "gateway-a", Actor: member().Actor}
	if r.lease, err = r.leases.Issue(authz.LeaseRequest{Provider: rigProvider, Capabilities: ids, Scope: scope, Budget: 1 << 20, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	rules, err := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: port, PathPrefix: "/v1", Methods: []string{"GET", "POST"}, Headers: []string{"Content-Type"}}})
	if err != nil {
		t.Fatal(err)
	}
	r.conn = edge.Connection{Credential: rigCred, Rules: rules}
	if r.edge, err = edge.NewEdge(edge.EdgeConfig{
		Registry: r.registry, Leases: r.leases, Custodian: r.custodian, Approvals: r.approvals, Label: checkfu.LabelMock, Now: r.clock.Now,
		Dialer: dialer, RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs,
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.edge.CloseIdleConnections)
	if r.tokens, err = gateway.NewHMACTokens(rigKey, r.clock.Now); err != nil {
		t.Fatal(err)
	}
	if r.gw, err = gateway.New(gateway.Config{
		Authenticator: r.tokens, Assignments: r.assignments, Registry: r.registry, Connections: []edge.Connection{r.conn},
		Leases: r.leases, Approvals: r.approvals, Edge: r.edge, Evidence: r.evidence, Label: checkfu.LabelMock,
		Service: "runner", Name: "gateway-a", Now: r.clock.Now,
	}); err != nil {
		t.Fatal(err)
	}
	return r
}

// grant assigns capability to the member's actor in its project.
func (r *rig) grant(capability string) authz.PermissionAssignment {
	r.t.Helper()
	rc := member()
	a, err := r.assignments.Assign(authz.PermissionAssignment{Actor: rc.Actor, Capability: capability, Tenant: rc.Tenant, Workspace: rc.Workspace, Project: rc.Project, ExpiresAt: r.clock.Now().Add(time.Hour)})
	if err != nil {
		r.t.Fatal(err)
	}
	return a
}

// channel opens a channel for rc with the rig's lease and every tool.
func (r *rig) channel(rc checkfu.RequestContext) *gateway.Channel {
	r.t.Helper()
	tok, err := r.tokens.Issue(rc, time.Minute)
	if err != nil {
		r.t.Fatal(err)
	}
	ch, err := r.gw.Open(context.Background(), gateway.ChannelConfig{Token: tok, Lease: r.lease.ID, Tools: r.tools})
	if err != nil {
		r.t.Fatal(err)
	}
	return ch
}

// approve records an approval of the create call, as the platform would.
func (r *rig) approve(args string) {
	r.t.Helper()
	call := authz.ToolCall{Capability: "issues.create", Arguments: json.RawMessage(args)}
	action, err := r.registry.Arguments(call)
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.approvals.Decide(context.Background(), authz.ApprovalDecision{
		Binding:  authz.ApprovalBinding{Actor: member().Actor, Grant: r.lease.ID, Action: action.Digest(), Effect: action.Effect, Scope: member().Session},
		Approver: "user:carol", Approve: true, TTL: time.Minute,
	}); err != nil {
		r.t.Fatal(err)
	}
}
