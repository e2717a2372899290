package matrix

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
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/gateway"
	"github.com/checkfu/checkfu/gateway/broker"
	"github.com/checkfu/checkfu/internal/dnsserver"
	"github.com/checkfu/checkfu/internal/memevidence"
)

// The plane side of authority_separation: native custody holding the
// canary as a provider credential, custody's outbound edge, the
// capability gateway, and its broker on a Unix socket in a host directory
// only the plane serves. The provider is a TLS listener on the host's
// loopback, reached as planeHost, recording every request it receives:
// from where, and whether the canary credential was attached.

// planeHost is the provider's name; the owned DNS of the workload side
// never answers it.
const planeHost = "plane.example.com" // inside the httptest certificate's *.example.com

// planeTool is the one tool the plane's profile grants.
const planeTool = "list_issues"

// A planeHit is one request the plane's provider received.
type planeHit struct {
	From string `json:"from"`
	Path string `json:"path"`
	// CredentialAttached reports whether the request carried the canary
	// credential (the value itself is never recorded).
	CredentialAttached bool `json:"credential_attached"`
}

type plane struct {
	dir    string
	srv    *httptest.Server
	dns    *dnsserver.Server
	plane  *gateway.Plane
	cancel context.CancelFunc
	served chan error

	mu   sync.Mutex
	hits []planeHit // guarded by mu
}

// startPlane builds the plane and serves its broker in a fresh host
// directory.
func startPlane(canary string) (_ *plane, err error) {
	p := &plane{}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	p.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		p.mu.Lock()
		p.hits = append(p.hits, planeHit{From: req.RemoteAddr, Path: req.URL.Path, CredentialAttached: strings.Contains(req.Header.Get("Authorization"), canary)})
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"issues":[{"n":1}]}`)
	}))
	port := p.srv.Listener.Addr().(*net.TCPAddr).AddrPort().Port()
	base := "https://" + planeHost + ":" + strconv.Itoa(int(port))
	if p.dns, err = dnsserver.Start(); err != nil {
		return nil, err
	}
	p.dns.Set(planeHost, netip.MustParseAddr("127.0.0.1"))
	dialer, err := egress.NewDialer(egress.DialerConfig{Resolver: p.dns.Addr(), TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	cred := custody.Binding{Namespace: "matrix", Integration: "plane", Handle: address.MustParseHandle("ch_mmmmmmmmmmmmmmmmmmmmmmmmmm")}
	native := custody.NewNative(custody.GenerateKeyset(), custody.NewMemoryStore())
	if err := native.Put(context.Background(), cred, custody.NewSecret([]byte(canary))); err != nil {
		return nil, err
	}
	reg := authz.Registration{Capability: "issues.list", Operation: "GET", Resource: base + "/v1/issues", Credential: cred, Effect: authz.ReadOnly,
		Tool: authz.ToolDescriptor{Name: planeTool, Description: "List the issues.", InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`)}}
	registry, err := authz.NewRegistry(reg)
	if err != nil {
		return nil, err
	}
	provider := checkfu.ProviderRevision{Provider: "checkfu:matrix-plane", Revision: "1"}
	cat, err := authz.NewCatalog(authz.ProviderEntry{Revision: provider, Capabilities: []string{reg.Capability}})
	if err != nil {
		return nil, err
	}
	rc := checkfu.RequestContext{Actor: "user:matrix", Role: "member", Tenant: "org-m", Workspace: "ws-m", Project: "proj-m",
		Session: "sess-m", Request: "req-m", Run: "run-m", Release: "checkfu@matrix"}
	rules, err := egress.NewRules([]egress.Rule{{Host: planeHost, Port: port, PathPrefix: "/v1", Methods: []string{"GET"}}})
	if err != nil {
		return nil, err
	}
	conn := edge.Connection{Credential: cred, Rules: rules}
	var key [32]byte
	copy(key[:], NewCanary())
	tokens, err := gateway.NewHMACTokens(key[:], time.Now)
	if err != nil {
		return nil, err
	}
	assignments := &authz.Assignments{}
	if _, err := assignments.Assign(authz.PermissionAssignment{Actor: rc.Actor, Capability: reg.Capability, Tenant: rc.Tenant, Workspace: rc.Workspace, Project: rc.Project, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		return nil, err
	}
	roots := p.srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	if p.plane, err = gateway.NewPlane(gateway.PlaneConfig{
		Authenticator: tokens, Registry: registry, Catalog: cat, Connections: []edge.Connection{conn}, Assignments: assignments,
		Lease: authz.LeaseRequest{Provider: provider, Capabilities: []string{reg.Capability},
			Scope: authz.LeaseScope{Service: "runner", Gateway: "gateway-m", Actor: rc.Actor}, Budget: 1 << 20, TTL: time.Hour},
		Evidence: &memevidence.Sink{}, Label: checkfu.LabelIsolated, Now: time.Now,
		Edge: func(leases *authz.Leases) (gateway.Edge, error) {
			e, err := edge.NewEdge(edge.EdgeConfig{Leases: leases, Custodian: native, Label: checkfu.LabelIsolated, Now: time.Now, Dialer: dialer, RootCAs: roots})
			if err != nil {
				return nil, err
			}
			return e, nil
		},
	}); err != nil {
		return nil, err
	}
	lease, gw := p.plane.Lease, p.plane.Gateway
	tok, err := tokens.Issue(rc, 10*time.Minute)
	if err != nil {
		return nil, err
	}
	ch, err := gw.Open(context.Background(), gateway.ChannelConfig{Token: tok, Lease: lease.ID,
		Tools: []gateway.ProfileTool{{Capability: reg.Capability, Tool: reg.Tool.Name, Operation: reg.Operation, Resource: reg.Resource}}})
	if err != nil {
		return nil, err
	}
	b, err := broker.New(ch)
	if err != nil {
		return nil, err
	}
	if p.dir, err = os.MkdirTemp("", "checkfu-matrix-broker-"); err != nil {
		return nil, err
	}
	// The workload runs as a non-root user and must reach the socket.
	if err := os.Chmod(p.dir, 0o755); err != nil {
		return nil, err
	}
	ln, err := broker.ListenUnix(filepath.Join(p.dir, "broker.sock"))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel, p.served = cancel, make(chan error, 1)
	go func() { p.served <- b.Serve(ctx, ln) }()
	return p, nil
}

func (p *plane) recorded() []planeHit {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]planeHit{}, p.hits...)
}

func (p *plane) close() {
	if p.cancel != nil {
		p.cancel()
		<-p.served
	}
	p.plane.Close()
	if p.srv != nil {
		p.srv.Close()
	}
	if p.dns != nil {
		p.dns.Close()
	}
	if p.dir != "" {
		os.RemoveAll(p.dir)
	}
}
