package edge_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/custodytest"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/dnstest"
)

const edgeCanary = "ghp_EDGECANARY0123456789abcdefXYZ"

// countingCustodian counts Opens, so a test can prove a refused call
// never touched the credential.
type countingCustodian struct {
	custody.Custodian
	opens atomic.Int64
}

func (c *countingCustodian) Open(ctx context.Context, b custody.Binding) (*custody.Secret, error) {
	c.opens.Add(1)
	return c.Custodian.Open(ctx, b)
}

// An edgeRig is an Edge in front of a loopback TLS provider reached as
// api.example.com (127.0.0.1, treated as public for the test), with native
// custody holding the canary credential.
type edgeRig struct {
	t         testing.TB
	edge      *edge.Edge
	clock     *govClock
	leases    *authz.Leases
	approvals *authz.Approvals
	evidence  *custodytest.MemoryEvidence
	registry  *authz.Registry
	custodian *countingCustodian
	native    *custody.Native
	conn      edge.Connection
	lease     authz.Lease
	base      string // https://api.example.com:PORT
	dialer    *egress.Dialer
	roots     *x509.CertPool

	hits     atomic.Int64
	mu       sync.Mutex
	lastAuth string
	lastURL  string
	lastBody string

	listBody []byte // when set, what the default route answers
	// hostile, when set, answers /v1/hostile (capability "hostile"): a
	// test's upstream that answers as it likes.
	hostile http.HandlerFunc
}

func newEdgeRig(t testing.TB) *edgeRig {
	t.Helper()
	rig := &edgeRig{t: t, clock: newGovClock(), evidence: &custodytest.MemoryEvidence{}}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rig.hits.Add(1)
		body, _ := io.ReadAll(r.Body)
		rig.mu.Lock()
		rig.lastAuth, rig.lastURL, rig.lastBody = r.Header.Get("Authorization"), r.URL.String(), string(body)
		rig.mu.Unlock()
		switch r.URL.Path {
		case "/v1/echo":
			fmt.Fprintf(w, `{"you_sent":%q}`, r.Header.Get("Authorization"))
		case "/v1/echo-encoded":
			writeEncoded(w, r.URL.Query().Get("coding"), fmt.Sprintf(`{"you_sent":%q,"pad":%q}`, r.Header.Get("Authorization"), strings.Repeat("a", 512)))
		case "/v1/echo-malformed":
			// A provider whose broken answer quotes the request: the
			// transport's error message quotes the broken line.
			conn, bw, err := w.(http.Hijacker).Hijack()
			if err != nil {
				panic(err)
			}
			fmt.Fprintf(bw, "HTTP/1.1 200 OK\r\n%s\r\n\r\n", r.Header.Get("Authorization"))
			bw.Flush()
			conn.Close()
		case "/v1/redirect":
			http.Redirect(w, r, "https://elsewhere.example.com/v1/x", http.StatusFound)
		case "/v1/unauthorized":
			w.WriteHeader(http.StatusUnauthorized)
		case "/v1/big":
			w.Write(make([]byte, edge.MaxResponseBytes+1))
		case "/v1/hostile":
			rig.hostile(w, r)
		default:
			w.Header().Set("Set-Cookie", "session=abc")
			w.Header().Set("Content-Type", "application/json")
			if rig.listBody != nil {
				w.Write(rig.listBody)
				return
			}
			fmt.Fprint(w, `{"ok":true}`)
		}
	}))
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).AddrPort().Port()
	rig.base = "https://api.example.com:" + strconv.Itoa(int(port))

	dns, err := dnstest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dns.Close() })
	dns.Set("api.example.com", netip.MustParseAddr("127.0.0.1"))
	dns.Set("elsewhere.example.com", netip.MustParseAddr("127.0.0.1"))
	dialer, err := egress.NewDialer(egress.DialerConfig{Resolver: dns.Addr(), TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}

	rig.native = custody.NewNative(custody.GenerateKeyset(), custody.NewMemoryStore())
	if err := rig.native.Put(context.Background(), govCred, custody.NewSecret([]byte(edgeCanary))); err != nil {
		t.Fatal(err)
	}
	rig.custodian = &countingCustodian{Custodian: rig.native}

	regs := []authz.Registration{
		{Capability: "issues.create", Operation: "POST", Resource: rig.base + "/v1/repos/acme/app/issues", Credential: govCred, Effect: authz.ExternalEffect,
			Tool: authz.ToolDescriptor{Name: "create_issue", InputSchema: json.RawMessage(govIssueSchema)}},
		{Capability: "issues.list", Operation: "GET", Resource: rig.base + "/v1/repos/acme/app/issues", Credential: govCred, Effect: authz.ReadOnly,
			Tool: authz.ToolDescriptor{Name: "list_issues", InputSchema: json.RawMessage(`{"type":"object","properties":{"state":{"enum":["open","closed"]}},"additionalProperties":false}`)}},
		{Capability: "echo", Operation: "GET", Resource: rig.base + "/v1/echo", Credential: govCred, Effect: authz.ReadOnly,
			Tool: authz.ToolDescriptor{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		{Capability: "echo.encoded", Operation: "GET", Resource: rig.base + "/v1/echo-encoded", Credential: govCred, Effect: authz.ReadOnly,
			Tool: authz.ToolDescriptor{Name: "echo_encoded", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		{Capability: "echo.malformed", Operation: "GET", Resource: rig.base + "/v1/echo-malformed", Credential: govCred, Effect: authz.ReadOnly,
			Tool: authz.ToolDescriptor{Name: "echo_malformed", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		{Capability: "redirect", Operation: "GET", Resource: rig.base + "/v1/redirect", Credential: govCred, Effect: authz.ReadOnly,
			Tool: authz.ToolDescriptor{Name: "redirect", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		{Capability: "unauthorized", Operation: "GET", Resource: rig.base + "/v1/unauthorized", Credential: govCred, Effect: authz.ReadOnly,
			Tool: authz.ToolDescriptor{Name: "unauthorized", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		{Capability: "big", Operation: "GET", Resource: rig.base + "/v1/big", Credential: govCred, Effect: authz.ReadOnly,
			Tool: authz.ToolDescriptor{Name: "big", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		{Capability: "hostile", Operation: "GET", Resource: rig.base + "/v1/hostile", Credential: govCred, Effect: authz.ReadOnly,
			Tool: authz.ToolDescriptor{Name: "hostile", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		{Capability: "outside.rules", Operation: "GET", Resource: rig.base + "/v2/other", Credential: govCred, Effect: authz.ReadOnly,
			Tool: authz.ToolDescriptor{Name: "outside", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		// Remote MCP tools (remote_test.go): the default route, and one
		// that echoes the credential.
		{Capability: "mcp.search", Operation: "POST", Resource: rig.base + "/v1/mcp", Credential: govCred, Effect: authz.ReadOnly, Protocol: authz.MCP,
			Tool: authz.ToolDescriptor{Name: "search", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		{Capability: "mcp.echo", Operation: "POST", Resource: rig.base + "/v1/echo", Credential: govCred, Effect: authz.ReadOnly, Protocol: authz.MCP,
			Tool: authz.ToolDescriptor{Name: "search", InputSchema: json.RawMessage(`{"type":"object"}`)}},
	}
	rig.registry, err = authz.NewRegistry(regs...)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range regs {
		ids = append(ids, r.Capability)
	}
	cat, err := authz.NewCatalog(authz.ProviderEntry{Revision: govProvider, Capabilities: ids})
	if err != nil {
		t.Fatal(err)
	}
	rig.leases, err = authz.NewLeases(authz.LeaseConfig{Catalog: cat, Registry: rig.registry, Now: rig.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	rig.approvals, err = authz.NewApprovals(authz.ApprovalConfig{Evidence: rig.evidence, Label: checkfu.LabelMock, Now: rig.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	rig.lease, err = rig.leases.Issue(authz.LeaseRequest{Provider: govProvider, Capabilities: ids, Scope: govScope, Budget: 100, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	rules, err := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: port, PathPrefix: "/v1", Methods: []string{"GET", "POST"}, Headers: []string{"Content-Type"}}})
	if err != nil {
		t.Fatal(err)
	}
	rig.conn = edge.Connection{Credential: govCred, Rules: rules}
	rig.dialer, rig.roots = dialer, srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	rig.edge, err = edge.NewEdge(edge.EdgeConfig{
		Leases: rig.leases, Custodian: rig.custodian,
		Evidence: rig.evidence, Label: checkfu.LabelMock, Now: rig.clock.Now,
		Dialer: dialer, RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rig.edge.CloseIdleConnections)
	return rig
}

func (rig *edgeRig) invocation(capability, tool, op, path, args string) invocation {
	return invocation{
		Connection:    rig.conn,
		Lease:         rig.lease.ID,
		Scope:         govScope,
		ApprovalScope: "session:s1",
		Call:          authz.ToolCall{Capability: capability, Tool: tool, Operation: op, Resource: rig.base + path, Arguments: json.RawMessage(args)},
	}
}

func (rig *edgeRig) list() invocation {
	return rig.invocation("issues.list", "list_issues", "GET", "/v1/repos/acme/app/issues", `{"state":"open"}`)
}

func (rig *edgeRig) create() invocation {
	return rig.invocation("issues.create", "create_issue", "POST", "/v1/repos/acme/app/issues", `{"title":"bug","body":"it broke"}`)
}

// approve records an approval for inv as the platform would: it resolves
// the call to its canonical action and binds it.
func (rig *edgeRig) approve(inv invocation) string {
	rig.t.Helper()
	action, err := rig.registry.Resolve(inv.Call, inv.Connection.Credential)
	if err != nil {
		rig.t.Fatal(err)
	}
	a, err := rig.approvals.Decide(context.Background(), authz.ApprovalDecision{
		Binding:  authz.ApprovalBinding{Actor: inv.Scope.Actor, Grant: inv.Lease, Action: action.Digest(), Effect: action.Effect, Scope: inv.ApprovalScope},
		Approver: "bob", Approve: true, TTL: time.Minute,
	})
	if err != nil {
		rig.t.Fatal(err)
	}
	return a.ID
}

// noLeak fails if the canary appears in any form in err or v.
func noLeak(t *testing.T, err error, v any) {
	t.Helper()
	var parts []string
	if err != nil {
		parts = append(parts, err.Error(), fmt.Sprintf("%+v %#v", err, err))
	}
	if v != nil {
		b, _ := json.Marshal(v)
		parts = append(parts, string(b), fmt.Sprintf("%+v %#v", v, v))
	}
	for _, p := range parts {
		if strings.Contains(p, edgeCanary) || strings.Contains(p, edgeCanary[4:20]) {
			t.Fatalf("the credential leaked into %q", p)
		}
	}
}

func TestEdgeReadOnlyCall(t *testing.T) {
	rig := newEdgeRig(t)
	resp, err := rig.call(context.Background(), rig.list())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || string(resp.Body) != `{"ok":true}` || resp.Header.Get("Set-Cookie") != "" {
		t.Fatalf("response %+v", resp)
	}
	rig.mu.Lock()
	auth, u := rig.lastAuth, rig.lastURL
	rig.mu.Unlock()
	if auth != "Bearer "+edgeCanary || u != "/v1/repos/acme/app/issues?state=open" {
		t.Fatalf("provider saw Authorization %q at %q", auth, u)
	}
	noLeak(t, nil, resp)
	if n, _ := rig.leases.Remaining(rig.lease.ID); n != 99 {
		t.Fatalf("lease has %d uses left, want 99", n)
	}
}

// Every refusal before the send: the provider sees no request, the
// custodian never opens the credential, and the error holds no secret.
//
// Mutants (each makes this test fail):
//   - deleting the pipeline's rules decision (step 5): the denied cases
//     open the credential (egress.Client.Do still refuses them, later);
//   - deleting the pipeline's lease check: the lease cases are sent;
//   - deleting the approval requirement: the unapproved create is sent;
//   - deleting Registry.Resolve's checks: see TestResolveRefuses; here the
//     unknown capability would panic or be sent.
func TestEdgeRefusesBeforeProviderContact(t *testing.T) {
	rig := newEdgeRig(t)
	revoked, err := rig.leases.Issue(authz.LeaseRequest{Provider: govProvider, Capabilities: []string{"issues.list"}, Scope: govScope, Budget: 1, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := rig.leases.Revoke(revoked.ID); err != nil {
		t.Fatal(err)
	}
	otherRules, err := egress.NewRules([]egress.Rule{{Host: "other.example.com", Port: 443, Methods: []string{"GET"}}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		inv  func() invocation
		code checkfu.Code
	}{
		{"unknown capability", func() invocation {
			i := rig.list()
			i.Call.Capability = "issues.delete"
			return i
		}, authz.CodeCapabilityUnknown},
		{"mismatched resource", func() invocation {
			i := rig.list()
			i.Call.Resource = rig.base + "/v1/repos/acme/other/issues"
			return i
		}, authz.CodeCapabilityMismatch},
		{"mismatched credential", func() invocation {
			i := rig.list()
			i.Connection.Credential.Integration = "gitlab"
			return i
		}, authz.CodeCapabilityMismatch},
		{"invalid arguments", func() invocation {
			i := rig.list()
			i.Call.Arguments = json.RawMessage(`{"state":"all"}`)
			return i
		}, authz.CodeArgumentsInvalid},
		{"path outside the rules", func() invocation {
			return rig.invocation("outside.rules", "outside", "GET", "/v2/other", `{}`)
		}, egress.CodeNoRuleMatched},
		{"host outside the rules", func() invocation {
			i := rig.list()
			i.Connection.Rules = otherRules
			return i
		}, egress.CodeNoRuleMatched},
		{"no rules", func() invocation {
			i := rig.list()
			i.Connection.Rules = nil
			return i
		}, authz.CodeCapabilityMismatch},
		{"unknown lease", func() invocation {
			i := rig.list()
			i.Lease = "lease_nope"
			return i
		}, authz.CodeLeaseUnknown},
		{"revoked lease", func() invocation {
			i := rig.list()
			i.Lease = revoked.ID
			return i
		}, authz.CodeLeaseRevoked},
		{"other actor", func() invocation {
			i := rig.list()
			i.Scope.Actor = "mallory"
			return i
		}, authz.CodeLeaseOutOfScope},
		{"external effect without approval", rig.create, authz.CodeApprovalRequired},
		{"approval for another action", func() invocation {
			i := rig.create()
			rig.approve(i)
			i.Call.Arguments = json.RawMessage(`{"title":"different"}`)
			return i
		}, authz.CodeApprovalRequired},
		{"approval for another session", func() invocation {
			i := rig.create()
			rig.approve(i)
			i.ApprovalScope = "session:s2"
			return i
		}, authz.CodeApprovalRequired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := rig.hits.Load()
			opens := rig.custodian.opens.Load()
			resp, err := rig.call(context.Background(), tt.inv())
			if resp != nil {
				t.Fatalf("refused call returned a response")
			}
			if c, ok := checkfu.CodeOf(err); !ok || c != tt.code {
				t.Fatalf("err = %v, want refusal %s", err, tt.code)
			}
			if got := rig.hits.Load() - before; got != 0 {
				t.Fatalf("the provider saw %d requests", got)
			}
			if got := rig.custodian.opens.Load() - opens; got != 0 {
				t.Fatalf("the credential was opened %d times", got)
			}
			noLeak(t, err, nil)
		})
	}
	if n, _ := rig.leases.Remaining(rig.lease.ID); n != 100 {
		// No refusal spends budget: the lease is spent only as a call
		// leaves.
		t.Fatalf("lease has %d uses left, want 100", n)
	}
}

func TestEdgeExternalEffectUnderApproval(t *testing.T) {
	rig := newEdgeRig(t)
	inv := rig.create()
	approval := rig.approve(inv)
	resp, err := rig.call(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	rig.mu.Lock()
	body := rig.lastBody
	rig.mu.Unlock()
	if resp.Status != 200 || body != `{"body":"it broke","title":"bug"}` {
		t.Fatalf("status %d, provider got body %q", resp.Status, body)
	}
	ev := rig.evidence.Events()
	if len(ev) != 3 || ev[0].Kind != authz.EvidenceApprovalDecision || ev[2].Kind != authz.EvidenceApprovalResult || ev[2].Outcome != authz.OutcomeSucceeded ||
		ev[1].Kind != authz.EvidenceEdgeCall || ev[1].Approval != approval || ev[1].Action != ev[0].Action {
		t.Fatalf("evidence %+v", ev)
	}
	noLeak(t, nil, ev)
	// The approval is spent: a replay finds none and is not sent.
	hits := rig.hits.Load()
	_, err = rig.call(context.Background(), inv)
	wantCode(t, err, authz.CodeApprovalRequired)
	if rig.hits.Load() != hits {
		t.Fatal("replayed approval reached the provider")
	}
}

// Every call that reaches the edge leaves one edge_call event: the
// authority it ran under and its terminal result (a call the pipeline
// refuses is the pipeline's to record); a sink that fails withholds the
// response.
func TestEdgeRecordsEvidence(t *testing.T) {
	rig := newEdgeRig(t)
	if _, err := rig.call(context.Background(), rig.list()); err != nil {
		t.Fatal(err)
	}
	_, err := rig.edge.Send(context.Background(), edge.Authorized{})
	wantCode(t, err, edge.CodeNotAuthorized)
	ev := rig.evidence.Events()
	if len(ev) != 2 {
		t.Fatalf("%d events, want 2: %+v", len(ev), ev)
	}
	ok, denied := ev[0], ev[1]
	if ok.Kind != authz.EvidenceEdgeCall || ok.Outcome != authz.OutcomeSucceeded || ok.Status != 200 || ok.Capability != "issues.list" ||
		ok.Tool != "list_issues" || ok.Grant != rig.lease.ID || ok.Provider != govProvider || ok.Actor != "alice" || ok.Label != checkfu.LabelMock || ok.Action == "" {
		t.Errorf("allowed call evidence %+v", ok)
	}
	if denied.Outcome != authz.OutcomeRefused || denied.Code != edge.CodeNotAuthorized || denied.Grant != "" || denied.Status != 0 {
		t.Errorf("denied call evidence %+v", denied)
	}
	noLeak(t, nil, ev)

	ed, err := edge.NewEdge(edge.EdgeConfig{Leases: rig.leases, Custodian: rig.custodian, Evidence: failingSink{}, Dialer: rig.dialer, RootCAs: rig.roots})
	if err != nil {
		t.Fatal(err)
	}
	defer ed.CloseIdleConnections()
	resp, err := rig.via(ed).Call(context.Background(), rig.list())
	var ee *authz.EvidenceError
	if resp != nil || !errors.As(err, &ee) {
		t.Fatalf("call with a failing sink = %v, %v; want no response and an EvidenceError", resp, err)
	}
}

func TestEdgeWithholdsEchoedCredential(t *testing.T) {
	rig := newEdgeRig(t)
	resp, err := rig.call(context.Background(), rig.invocation("echo", "echo", "GET", "/v1/echo", `{}`))
	wantCode(t, err, edge.CodeCredentialEchoed)
	if resp != nil {
		t.Fatal("echoing response returned")
	}
	noLeak(t, err, resp)
}

func TestEdgeRefusesOversizedResponse(t *testing.T) {
	rig := newEdgeRig(t)
	resp, err := rig.call(context.Background(), rig.invocation("big", "big", "GET", "/v1/big", `{}`))
	wantCode(t, err, edge.CodeResponseTooLarge)
	if resp != nil {
		t.Fatal("oversized response returned")
	}
}

func TestEdgeRefusesRedirect(t *testing.T) {
	rig := newEdgeRig(t)
	hits := rig.hits.Load()
	resp, err := rig.call(context.Background(), rig.invocation("redirect", "redirect", "GET", "/v1/redirect", `{}`))
	wantCode(t, err, egress.CodeRedirectRefused)
	if resp != nil || rig.hits.Load() != hits+1 {
		t.Fatalf("redirect followed or not made: resp %v, hits %d", resp, rig.hits.Load()-hits)
	}
	noLeak(t, err, nil)
}

// TestEdgeEvidenceOfWithheldAnswers: a call the provider answered ran,
// even when its answer is then withheld (it echoes the credential, is too
// large, or is a redirect). Its evidence says so: failed, with the
// provider's status and the refusal's code, never refused, which would
// claim the provider was not contacted.
func TestEdgeEvidenceOfWithheldAnswers(t *testing.T) {
	rig := newEdgeRig(t)
	for _, c := range []struct {
		path   string
		code   checkfu.Code
		status int
	}{
		{"echo", edge.CodeCredentialEchoed, http.StatusOK},
		{"big", edge.CodeResponseTooLarge, http.StatusOK},
		{"redirect", egress.CodeRedirectRefused, http.StatusFound},
	} {
		before := len(rig.evidence.Events())
		_, err := rig.call(context.Background(), rig.invocation(c.path, c.path, "GET", "/v1/"+c.path, `{}`))
		wantCode(t, err, c.code)
		ev := rig.evidence.Events()
		if len(ev) != before+1 {
			t.Fatalf("%s: %d new events, want 1", c.path, len(ev)-before)
		}
		if got := ev[before]; got.Outcome != authz.OutcomeFailed || got.Code != c.code || got.Status != c.status || got.Grant == "" {
			t.Errorf("%s: evidence %+v, want outcome failed, code %s, status %d and the lease", c.path, got, c.code, c.status)
		}
	}
	noLeak(t, nil, rig.evidence.Events())
}

func TestEdgeUnusableCredentialNotSent(t *testing.T) {
	rig := newEdgeRig(t)
	if err := rig.native.Put(context.Background(), govCred, custody.NewSecret([]byte("tok\r\nX-Injected: 1"))); err != nil {
		t.Fatal(err)
	}
	resp, err := rig.call(context.Background(), rig.list())
	wantCode(t, err, edge.CodeCredentialUnusable)
	if resp != nil || rig.hits.Load() != 0 {
		t.Fatalf("unusable credential sent: %d hits", rig.hits.Load())
	}
	if strings.Contains(err.Error(), "Injected") {
		t.Fatalf("error quotes the credential: %v", err)
	}
}

func TestNewEdgeNeedsParts(t *testing.T) {
	if _, err := edge.NewEdge(edge.EdgeConfig{}); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Fatalf("NewEdge with nothing = %v, want %s", err, checkfu.CodeConfigInvalid)
	}
	rig := newEdgeRig(t)
	for _, h := range []string{"Host", "cookie", "X-Forwarded-For", "Proxy-Authorization", "Metadata-Flavor", "bad header", "X_Api_Key"} {
		_, err := edge.NewEdge(edge.EdgeConfig{Leases: rig.leases, Custodian: rig.native, CredentialHeader: h})
		if !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Errorf("NewEdge with CredentialHeader %q = %v, want %s", h, err, checkfu.CodeConfigInvalid)
		}
	}
	if _, err := edge.NewEdge(edge.EdgeConfig{Leases: rig.leases, Custodian: rig.native, Label: 9}); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Errorf("NewEdge with label 9 = %v, want %s", err, checkfu.CodeConfigInvalid)
	}
	// The other constructors refuse a missing part the same way.
	for name, err := range map[string]error{
		"NewLeases":          second(authz.NewLeases(authz.LeaseConfig{})),
		"NewApprovals":       second(authz.NewApprovals(authz.ApprovalConfig{})),
		"NewApprovals label": second(authz.NewApprovals(authz.ApprovalConfig{Evidence: &custodytest.MemoryEvidence{}, Label: 9})),
		"NewTokenRuntime":    second(edge.NewTokenRuntime(edge.TokenRuntimeConfig{})),
	} {
		if !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Errorf("%s with a missing part = %v, want %s", name, err, checkfu.CodeConfigInvalid)
		}
	}
	_, _, _, err := (&edge.OAuthRefresher{}).Refresh(context.Background(), govCred, custody.NewSecret([]byte("rt")))
	if !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Errorf("the zero OAuthRefresher = %v, want %s", err, checkfu.CodeConfigInvalid)
	}
	for _, h := range []string{"", "authorization", "X-Api-Key"} {
		if _, err := edge.NewEdge(edge.EdgeConfig{Leases: rig.leases, Custodian: rig.native, CredentialHeader: h}); err != nil {
			t.Errorf("NewEdge refused CredentialHeader %q: %v", h, err)
		}
	}
	var zero edge.Edge
	if _, err := zero.Send(context.Background(), edge.Authorized{}); !errors.As(err, new(*checkfu.Refusal)) {
		t.Fatalf("zero Edge: %v", err)
	}
}

// second returns the error of a two-value constructor call.
func second[T any](_ T, err error) error { return err }
