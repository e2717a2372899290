package edge_test

import (
	"context"
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
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/custodytest"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/dnstest"
)

const initialRefresh = "rt-CANARY-initial-refresh-0000"

// oauthProvider is a loopback OAuth token endpoint and API, reached as
// auth.example.com and api.example.com. It issues access tokens
// "at-CANARY-N" valid for an hour and rotates the refresh token on every
// exchange; the API accepts only the newest access token.
type oauthProvider struct {
	srv  *httptest.Server
	port uint16
	dial *egress.Dialer

	mu        sync.Mutex
	refreshes int
	refresh   string // the refresh token it will accept next
	access    string // the access token the API accepts
	apiHits   int
	apiSaw    []string // every header value and body the API was sent
}

func newOAuthProvider(t *testing.T) *oauthProvider {
	t.Helper()
	p := &oauthProvider{refresh: initialRefresh}
	p.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		switch {
		case r.Host == "auth.example.com:"+strconv.Itoa(int(p.port)) && r.URL.Path == "/oauth/token" && r.Method == "POST":
			if r.FormValue("grant_type") != "refresh_token" || r.FormValue("refresh_token") != p.refresh || r.FormValue("client_id") != "checkfu" {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			p.refreshes++
			p.access = fmt.Sprintf("at-CANARY-%06d", p.refreshes)
			p.refresh = fmt.Sprintf("rt-CANARY-rotated-%06d", p.refreshes)
			json.NewEncoder(w).Encode(map[string]any{"access_token": p.access, "token_type": "bearer", "expires_in": 3600, "refresh_token": p.refresh})
		case strings.HasPrefix(r.URL.Path, "/v1/"):
			p.apiHits++
			body, _ := io.ReadAll(r.Body)
			p.apiSaw = append(p.apiSaw, r.URL.String(), string(body))
			for _, vs := range r.Header {
				p.apiSaw = append(p.apiSaw, vs...)
			}
			if r.Header.Get("Authorization") != "Bearer "+p.access {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			fmt.Fprint(w, `{"ok":true}`)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(p.srv.Close)
	p.port = p.srv.Listener.Addr().(*net.TCPAddr).AddrPort().Port()
	dns, err := dnstest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dns.Close() })
	dns.Set("auth.example.com", netip.MustParseAddr("127.0.0.1"))
	dns.Set("api.example.com", netip.MustParseAddr("127.0.0.1"))
	p.dial, err = egress.NewDialer(egress.DialerConfig{Resolver: dns.Addr(), TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *oauthProvider) roots() *http.Transport { return p.srv.Client().Transport.(*http.Transport) }

func (p *oauthProvider) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refreshes
}

// revokeAccess makes the API reject the current access token, as a
// provider does when it revokes it early.
func (p *oauthProvider) revokeAccess() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.access = "revoked"
}

func newTokenRuntime(t *testing.T, p *oauthProvider, clock *govClock) *edge.TokenRuntime {
	t.Helper()
	rules, err := egress.NewRules([]egress.Rule{{Host: "auth.example.com", Port: p.port, PathPrefix: "/oauth/token", Methods: []string{"POST"}, Headers: []string{"Content-Type"}}})
	if err != nil {
		t.Fatal(err)
	}
	client, err := egress.NewClient(egress.ClientConfig{Rules: rules, Dialer: p.dial, RootCAs: p.roots().TLSClientConfig.RootCAs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.CloseIdleConnections)
	rt, err := edge.NewTokenRuntime(edge.TokenRuntimeConfig{
		Keys:  custody.GenerateKeyset(),
		Store: custody.NewMemoryStore(),
		Refresher: &edge.OAuthRefresher{
			Client: client, TokenURL: "https://auth.example.com:" + strconv.Itoa(int(p.port)) + "/oauth/token", ClientID: "checkfu", Now: clock.Now,
		},
		Now: clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Enroll(context.Background(), govCred, custody.NewSecret([]byte(initialRefresh))); err != nil {
		t.Fatal(err)
	}
	return rt
}

func TestTokenRuntimeConformance(t *testing.T) {
	custodytest.TestRuntime(t, func(t *testing.T) custodytest.RuntimeRig {
		p := newOAuthProvider(t)
		clock := newGovClock()
		return custodytest.RuntimeRig{
			Runtime:    newTokenRuntime(t, p, clock),
			Enrolled:   govCred,
			Unenrolled: custody.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_caaaaaaaaaaaaaaaaaaaaaaaaa")},
			Lifetime:   time.Hour,
			Advance:    clock.Advance,
			Refreshes:  p.count,
		}
	})
}

// The edge over runtime-backed custody: the access token is refreshed by
// the runtime, attached at the edge, and a 401 makes the runtime refresh
// before the next call.
func TestEdgeOverTokenRuntime(t *testing.T) {
	p := newOAuthProvider(t)
	clock := newGovClock()
	rt := newTokenRuntime(t, p, clock)
	base := "https://api.example.com:" + strconv.Itoa(int(p.port))
	reg, err := authz.NewRegistry(authz.Registration{
		Capability: "repo.read", Operation: "GET", Resource: base + "/v1/repo", Credential: govCred, Effect: authz.ReadOnly,
		Tool: authz.ToolDescriptor{Name: "read_repo", InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := authz.NewCatalog(authz.ProviderEntry{Revision: govProvider, Capabilities: []string{"repo.read"}})
	if err != nil {
		t.Fatal(err)
	}
	leases, err := authz.NewLeases(authz.LeaseConfig{Catalog: cat, Registry: reg, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	lease, err := leases.Issue(authz.LeaseRequest{Provider: govProvider, Capabilities: []string{"repo.read"}, Scope: govScope, Budget: 10, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	rules, err := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: p.port, PathPrefix: "/v1", Methods: []string{"GET"}}})
	if err != nil {
		t.Fatal(err)
	}
	ed, err := edge.NewEdge(edge.EdgeConfig{Leases: leases, Custodian: rt, Dialer: p.dial, RootCAs: p.roots().TLSClientConfig.RootCAs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ed.CloseIdleConnections)
	inv := invocation{
		Connection: edge.Connection{Credential: govCred, Rules: rules}, Lease: lease.ID, Scope: govScope,
		Call: authz.ToolCall{Capability: "repo.read", Tool: "read_repo", Operation: "GET", Resource: base + "/v1/repo", Arguments: json.RawMessage(`{}`)},
	}
	call := func() *edge.Response {
		t.Helper()
		resp, err := caller{e: ed, registry: reg, leases: leases, now: time.Now}.Call(context.Background(), inv)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(resp); strings.Contains(string(b), "CANARY") {
			t.Fatalf("response holds a token: %s", b)
		}
		return resp
	}
	if r := call(); r.Status != 200 || p.count() != 1 {
		t.Fatalf("first call: status %d after %d refreshes", r.Status, p.count())
	}
	p.revokeAccess()
	if r := call(); r.Status != 401 {
		t.Fatalf("call with a revoked token: status %d", r.Status)
	}
	if r := call(); r.Status != 200 || p.count() != 2 {
		t.Fatalf("call after a 401: status %d after %d refreshes, want 200 after 2", r.Status, p.count())
	}
	clock.Advance(time.Hour - 5*time.Second) // inside the lease, past the refresh skew
	if r := call(); r.Status != 200 || p.count() != 3 {
		t.Fatalf("call after expiry: status %d after %d refreshes", r.Status, p.count())
	}
	// The refresh token crosses only the runtime's own exchange with the
	// token endpoint: the API never sees it.
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, v := range p.apiSaw {
		if strings.Contains(v, "rt-CANARY") {
			t.Fatalf("the API was sent a refresh token: %q", v)
		}
	}
}

// A refresh exchange the rules do not allow is never sent, and the
// runtime reports a refusal, not a credential.
func TestTokenRuntimeRefreshDecidedByRules(t *testing.T) {
	p := newOAuthProvider(t)
	clock := newGovClock()
	rules, err := egress.NewRules([]egress.Rule{{Host: "auth.example.com", Port: p.port, PathPrefix: "/other", Methods: []string{"POST"}, Headers: []string{"Content-Type"}}})
	if err != nil {
		t.Fatal(err)
	}
	client, err := egress.NewClient(egress.ClientConfig{Rules: rules, Dialer: p.dial, RootCAs: p.roots().TLSClientConfig.RootCAs})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := edge.NewTokenRuntime(edge.TokenRuntimeConfig{
		Keys: custody.GenerateKeyset(), Store: custody.NewMemoryStore(), Now: clock.Now,
		Refresher: &edge.OAuthRefresher{Client: client, TokenURL: "https://auth.example.com:" + strconv.Itoa(int(p.port)) + "/oauth/token", ClientID: "checkfu"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Enroll(context.Background(), govCred, custody.NewSecret([]byte(initialRefresh))); err != nil {
		t.Fatal(err)
	}
	s, err := rt.Open(context.Background(), govCred)
	if s != nil || !errorsIsCode(err, egress.CodeNoRuleMatched) {
		t.Fatalf("Open = %v, %v; want no_rule_matched", s, err)
	}
	if p.count() != 0 || strings.Contains(err.Error(), "CANARY") {
		t.Fatalf("refused refresh reached the provider (%d) or leaked: %v", p.count(), err)
	}
}

func errorsIsCode(err error, code checkfu.Code) bool {
	c, ok := checkfu.CodeOf(err)
	return ok && c == code
}

// fakeRefresher returns what it is told to.
type fakeRefresher struct {
	access    string
	expiresIn time.Duration
	now       func() time.Time
}

func (f fakeRefresher) Refresh(context.Context, custody.Binding, *custody.Secret) (*custody.Secret, *custody.Secret, time.Time, error) {
	var a *custody.Secret
	if f.access != "" {
		a = custody.NewSecret([]byte(f.access))
	}
	return a, nil, f.now().Add(f.expiresIn), nil
}

func TestTokenRuntimeRefusesUnusableRefresh(t *testing.T) {
	clock := newGovClock()
	for _, f := range []fakeRefresher{
		{access: "", expiresIn: time.Hour, now: clock.Now},
		{access: "at-already-expired", expiresIn: 0, now: clock.Now},
		{access: "at-expired-long-ago", expiresIn: -time.Hour, now: clock.Now},
	} {
		rt, err := edge.NewTokenRuntime(edge.TokenRuntimeConfig{Keys: custody.GenerateKeyset(), Store: custody.NewMemoryStore(), Refresher: f, Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		if err := rt.Enroll(context.Background(), govCred, custody.NewSecret([]byte(initialRefresh))); err != nil {
			t.Fatal(err)
		}
		s, err := rt.Open(context.Background(), govCred)
		var re *edge.RefreshError
		if s != nil || !errors.As(err, &re) {
			t.Fatalf("Open with refresher %+v = %v, %v; want a RefreshError", f, s, err)
		}
	}
	if _, err := edge.NewTokenRuntime(edge.TokenRuntimeConfig{}); err == nil {
		t.Fatal("NewTokenRuntime without parts succeeded")
	}
}

// TestZeroTokenRuntimeRefuses: a TokenRuntime not built by
// NewTokenRuntime refuses every call with config_invalid.
func TestZeroTokenRuntimeRefuses(t *testing.T) {
	var r edge.TokenRuntime
	ctx := context.Background()
	for name, err := range map[string]error{
		"Enroll":     r.Enroll(ctx, govCred, custody.NewSecret([]byte("rt"))),
		"Remove":     r.Remove(ctx, govCred),
		"Invalidate": r.Invalidate(ctx, govCred),
		"Open":       second(r.Open(ctx, govCred)),
	} {
		if !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Errorf("zero TokenRuntime %s = %v, want %s", name, err, checkfu.CodeConfigInvalid)
		}
	}
}
