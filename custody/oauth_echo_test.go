package custody_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/internal/dnstest"
)

// A token endpoint whose malformed answer quotes the request (here the
// form body, as a header line without a colon) makes the transport fail
// with an error that quotes it. The refresher's error travels up through
// TokenRuntime.Open to the edge's caller, so it must not hold the
// refresh token, raw or form-encoded.
//
// Mutant: deleting the echo check on the exchange error in
// OAuthRefresher.Refresh makes this test fail.
func TestOAuthRefresherErrorWithholdsEchoedToken(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		conn, bw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(bw, "HTTP/1.1 200 OK\r\n%s\r\n\r\n", body)
		bw.Flush()
		conn.Close()
	}))
	t.Cleanup(srv.Close)
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
	client, err := egress.NewClient(egress.ClientConfig{Rules: rules, Dialer: dialer, RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.CloseIdleConnections)
	refresher := &custody.OAuthRefresher{Client: client, TokenURL: "https://auth.example.com:" + strconv.Itoa(int(port)) + "/oauth/token"}
	const token = "rt-CANARY/refresh+token"
	rt := custody.NewSecret([]byte(token))
	defer rt.Destroy()
	access, rotated, _, err := refresher.Refresh(context.Background(), govCred, rt)
	if access != nil || rotated != nil || err == nil {
		t.Fatalf("Refresh = %v, %v, %v; want a failure", access, rotated, err)
	}
	if _, ok := egress.UpstreamCodeOf(err); !ok {
		t.Fatalf("err = %v, want an *egress.UpstreamError", err)
	}
	if msg := err.Error(); strings.Contains(msg, "CANARY") {
		t.Fatalf("the refresh error quotes the refresh token: %q", msg)
	}
}
