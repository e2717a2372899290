package edge_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"time"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/dnstest"
)

// OAuthRefresher trades a refresh token at the provider's token endpoint,
// through an egress client whose rules allow exactly that POST. Here the
// endpoint is a loopback TLS server reached as auth.example.com (treated
// as public for the example only).
func ExampleOAuthRefresher() {
	cred := custody.Binding{Namespace: "acme", Integration: "github", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.PostFormValue("grant_type") != "refresh_token" || r.PostFormValue("refresh_token") != "refresh-token-1" {
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
			return
		}
		fmt.Fprint(w, `{"access_token":"access-token-1","token_type":"bearer","expires_in":3600,"refresh_token":"refresh-token-2"}`)
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).AddrPort().Port()
	dns, _ := dnstest.Start()
	defer dns.Close()
	dns.Set("auth.example.com", netip.MustParseAddr("127.0.0.1"))
	dialer, _ := egress.NewDialer(egress.DialerConfig{
		Resolver:                dns.Addr(),
		TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		Logger:                  slog.New(slog.DiscardHandler),
	})
	rules, _ := egress.NewRules([]egress.Rule{{Host: "auth.example.com", Port: port, PathPrefix: "/oauth/token", Methods: []string{"POST"}, Headers: []string{"Content-Type"}}})
	client, _ := egress.NewClient(egress.ClientConfig{Rules: rules, Dialer: dialer, RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs})
	defer client.CloseIdleConnections()

	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	refresher := &edge.OAuthRefresher{
		Client:   client,
		TokenURL: "https://auth.example.com:" + strconv.Itoa(int(port)) + "/oauth/token",
		Now:      func() time.Time { return now },
	}
	access, rotated, expires, err := refresher.Refresh(context.Background(), cred, custody.NewSecret([]byte("refresh-token-1")))
	if err != nil {
		panic(err)
	}
	defer access.Destroy()
	defer rotated.Destroy()
	fmt.Println(access, rotated, expires.Sub(now)) // tokens print redacted

	// Usually the refresher sits behind a TokenRuntime, which seals the
	// rotated refresh token and caches the access token.
	rt, _ := edge.NewTokenRuntime(edge.TokenRuntimeConfig{Keys: custody.GenerateKeyset(), Store: custody.NewMemoryStore(), Refresher: refresher, Now: refresher.Now})
	_ = rt.Enroll(context.Background(), cred, custody.NewSecret([]byte("refresh-token-1")))
	s, err := rt.Open(context.Background(), cred)
	fmt.Println(s, err)
	s.Destroy()
	// Output:
	// [redacted] [redacted] 1h0m0s
	// [redacted] <nil>
}
