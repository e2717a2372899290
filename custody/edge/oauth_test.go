package edge_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/dnstest"
)

// TestOAuthRefresherRefusesPlaintext points the refresher at a plain-http
// token endpoint that the rules and the dialer would both let through.
// The refresh is refused with plaintext_credential before anything is
// sent: the endpoint sees no request, let alone the refresh token.
func TestOAuthRefresherRefusesPlaintext(t *testing.T) {
	var mu sync.Mutex
	var saw []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		saw = append(saw, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"at","token_type":"bearer","expires_in":3600}`)
	}))
	t.Cleanup(srv.Close)
	_, portText, _ := net.SplitHostPort(srv.Listener.Addr().String())
	client := tokenEndpointClient(t, srv)

	// The query holds a key, as some providers' token URLs do: the
	// refusal names the endpoint by scheme and host alone.
	refresher := &edge.OAuthRefresher{Client: client, TokenURL: "http://auth.example.com:" + portText + "/oauth/token?key=KEY-CANARY"}
	rt := custody.NewSecret([]byte("rt-CANARY"))
	defer rt.Destroy()
	access, rotated, _, err := refresher.Refresh(context.Background(), custody.Binding{Namespace: "acme", Integration: "github", Handle: address.NewHandle()}, rt)
	if access != nil || rotated != nil || !errorsIsCode(err, egress.CodePlaintextCredential) {
		t.Fatalf("Refresh over http = %v, %v, %v; want a %s refusal", access, rotated, err, egress.CodePlaintextCredential)
	}
	if strings.Contains(err.Error(), "CANARY") {
		t.Fatalf("the refusal quotes the token or the URL's query: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(saw) != 0 {
		t.Fatalf("the plain-http token endpoint received %q", saw)
	}
}

// tokenEndpointClient returns an egress client whose rules allow POST to
// auth.example.com/oauth/token at srv's port, with auth.example.com
// resolving to srv's loopback address (treated as public for the test)
// and srv's certificate trusted when it has one.
func tokenEndpointClient(t *testing.T, srv *httptest.Server) *egress.Client {
	t.Helper()
	port := srv.Listener.Addr().(*net.TCPAddr).AddrPort().Port()
	dns, err := dnstest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dns.Close() })
	dns.Set("auth.example.com", netip.MustParseAddr("127.0.0.1"))
	dialer, err := egress.NewDialer(egress.DialerConfig{Resolver: dns.Addr(), TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	rules, err := egress.NewRules([]egress.Rule{{Host: "auth.example.com", Port: port, PathPrefix: "/oauth/token", Methods: []string{"POST"}, Headers: []string{"Content-Type"}}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := egress.ClientConfig{Rules: rules, Dialer: dialer}
	if tr, ok := srv.Client().Transport.(*http.Transport); ok && tr.TLSClientConfig != nil {
		cfg.RootCAs = tr.TLSClientConfig.RootCAs
	}
	client, err := egress.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.CloseIdleConnections)
	return client
}
