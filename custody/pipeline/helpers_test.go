package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/custodytest"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/custody/pipeline"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/gateway/modelroute"
)

var (
	cred     = address.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}
	provider = checkfu.ProviderRevision{Provider: "checkfu:github", Revision: "3"}
	member   = checkfu.RequestContext{Actor: "user:bob", Role: "member", Tenant: "org-1", Workspace: "ws-1", Project: "proj-1",
		Session: "sess-1", Request: "req-1", Run: "run-1", Release: "checkfu@test"}
	tools = []pipeline.Tool{
		{Capability: "issues.list", Tool: "list_issues", Operation: "GET", Resource: "https://api.example.com/v1/issues"},
		{Capability: "issues.create", Tool: "create_issue", Operation: "POST", Resource: "https://api.example.com/v1/issues"},
		{Capability: "issues.close", Tool: "close_issue", Operation: "DELETE", Resource: "https://api.example.com/v1/issues"},
		{Capability: "model.chat", Tool: "model", Operation: "POST", Resource: "https://model.example.com/v1/messages"},
	}
	// rigCapabilities are the capabilities of tools, in order.
	rigCapabilities = []string{"issues.list", "issues.create", "issues.close", "model.chat"}
)

// clock is an injectable clock that moves only when told to.
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

// fakeEdge stands in for custody's outbound edge: it counts the
// authorized calls it is handed and answers 200 (the pipeline's tests
// are about what reaches the edge, not about the credential).
type fakeEdge struct {
	mu     sync.Mutex
	sent   int
	status int // the status it answers; zero means 200
	// streamed counts the model calls it was handed; it answers each
	// with a 200 and an empty JSON body.
	streamed int
	// entered and release, when set, hold a Send at the edge: it
	// closes entered, then waits for release.
	entered, release chan struct{}
}

func (f *fakeEdge) Send(ctx context.Context, a edge.Authorized) (*edge.Response, error) {
	if f.entered != nil {
		close(f.entered)
		<-f.release
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent++
	if f.status != 0 {
		return &edge.Response{Status: f.status, Body: []byte(`{"error":"no"}`)}, nil
	}
	return &edge.Response{Status: 200, Body: []byte(`{"ok":true}`)}, nil
}

func (f *fakeEdge) Remote(ctx context.Context, a edge.Authorized) (*edge.RemoteTransport, error) {
	return nil, errors.New("fakeEdge: no remote tools")
}

func (f *fakeEdge) Stream(ctx context.Context, a edge.Authorized, read func(*edge.Stream) error) error {
	f.mu.Lock()
	f.streamed++
	f.mu.Unlock()
	return read(&edge.Stream{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: strings.NewReader(`{}`),
		Screen: func([]byte) (int, error) { return 0, nil }})
}

func (f *fakeEdge) Streamed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.streamed
}

func (f *fakeEdge) Sent() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sent
}

// A rig is a pipeline over a fake edge, with a member's channel.
type rig struct {
	t         testing.TB
	clock     *clock
	registry  *authz.Registry
	leases    *authz.Leases
	lease     authz.Lease
	approvals *authz.Approvals
	evidence  *custodytest.MemoryEvidence
	// onRecord, when set, sees every event the pipeline records, before
	// it is recorded: a test's hook between two steps of a call.
	onRecord    func(authz.Evidence)
	assignments *authz.Assignments
	assigned    map[string]string // capability -> the id of its assignment
	edge        *fakeEdge
	cfg         pipeline.Config // what p was made with
	p           *pipeline.Pipeline
	ch          *pipeline.Channel
}

func newRig(t testing.TB, budget int64) *rig {
	t.Helper()
	r := &rig{t: t, clock: &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}, evidence: &custodytest.MemoryEvidence{}, edge: &fakeEdge{}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var err error
	r.registry, err = authz.NewRegistry(
		authz.Registration{Capability: "issues.list", Operation: "GET", Resource: tools[0].Resource, Credential: cred, Effect: authz.ReadOnly,
			Tool: authz.ToolDescriptor{Name: "list_issues", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		authz.Registration{Capability: "issues.create", Operation: "POST", Resource: tools[1].Resource, Credential: cred, Effect: authz.ExternalEffect,
			Tool: authz.ToolDescriptor{Name: "create_issue", InputSchema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}`)}},
		authz.Registration{Capability: "issues.close", Operation: "DELETE", Resource: tools[2].Resource, Credential: cred, Effect: authz.ReadOnly,
			Tool: authz.ToolDescriptor{Name: "close_issue", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		authz.Registration{Capability: "model.chat", Operation: "POST", Resource: tools[3].Resource, Credential: cred, Effect: authz.ReadOnly, Protocol: authz.ModelAPI,
			Tool:  authz.ToolDescriptor{Name: "model", InputSchema: json.RawMessage(`{"type":"object"}`)},
			Model: authz.ModelRoute{Dialect: modelroute.AnthropicMessages, Models: []string{"claude-test"}, Requests: 4, Tokens: 1 << 20}},
	)
	must(err)
	cat, err := authz.NewCatalog(authz.ProviderEntry{Revision: provider, Capabilities: rigCapabilities})
	must(err)
	r.leases, err = authz.NewLeases(authz.LeaseConfig{Catalog: cat, Registry: r.registry, Now: r.clock.Now})
	must(err)
	scope := authz.LeaseScope{Service: "runner", Gateway: "gateway-a", Actor: member.Actor}
	r.lease, err = r.leases.Issue(authz.LeaseRequest{Provider: provider, Capabilities: rigCapabilities, Scope: scope, Budget: budget, TTL: time.Hour})
	must(err)
	r.approvals, err = authz.NewApprovals(authz.ApprovalConfig{Evidence: r.evidence, Label: checkfu.LabelMock, Now: r.clock.Now})
	must(err)
	// DELETE is not allowed: issues.close is refused by the rules.
	rules, err := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: 443, PathPrefix: "/v1", Methods: []string{"GET", "POST"}, Headers: []string{"Content-Type"}},
		{Host: "model.example.com", Port: 443, PathPrefix: "/v1/messages", Methods: []string{"POST"}, Headers: []string{"Accept", "Anthropic-Version", "Content-Type"}}})
	must(err)
	assignments := &authz.Assignments{}
	r.assignments, r.assigned = assignments, map[string]string{}
	for _, c := range rigCapabilities {
		a, err := assignments.Assign(authz.PermissionAssignment{Actor: member.Actor, Capability: c, Tenant: member.Tenant, Workspace: member.Workspace, ExpiresAt: r.clock.Now().Add(24 * time.Hour)})
		must(err)
		r.assigned[c] = a.ID
	}
	r.cfg = pipeline.Config{
		Assignments: assignments, Registry: r.registry, Connections: []edge.Connection{{Credential: cred, Rules: rules}},
		Leases: r.leases, Approvals: r.approvals, Edge: r.edge, Evidence: hookedSink{r}, Label: checkfu.LabelMock,
		Service: "runner", Name: "gateway-a", Now: r.clock.Now,
	}
	r.p, err = pipeline.New(r.cfg)
	must(err)
	r.ch, err = r.p.Open(member, r.lease.ID, tools)
	must(err)
	return r
}

// hookedSink records into the rig's evidence after its onRecord hook.
type hookedSink struct{ r *rig }

func (h hookedSink) Record(ctx context.Context, ev authz.Evidence) error {
	if h.r.onRecord != nil {
		h.r.onRecord(ev)
	}
	return h.r.evidence.Record(ctx, ev)
}

// approve records an approval of the create call with args, live for ttl,
// bound as the pipeline's dry run says.
func (r *rig) approve(args string, ttl time.Duration) {
	r.t.Helper()
	plan, err := r.ch.Plan("issues.create", json.RawMessage(args))
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.approvals.Decide(context.Background(), authz.ApprovalDecision{Binding: plan.Binding, Approver: "user:carol", Approve: true, TTL: ttl}); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) remaining() int64 {
	r.t.Helper()
	n, err := r.leases.Remaining(r.lease.ID)
	if err != nil {
		r.t.Fatal(err)
	}
	return n
}

func wantCode(t *testing.T, err error, code checkfu.Code) {
	t.Helper()
	if !errors.Is(err, code) {
		t.Fatalf("err = %v, want %s", err, code)
	}
}
