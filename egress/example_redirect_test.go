package egress_test

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"

	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/dnstest"
)

// A Client never follows a redirect: the 3xx comes back as a
// CodeRedirectRefused refusal whose *RedirectError says what the rules
// would decide for the target, and the credential is not sent on.
func ExampleClient_Do_redirect() {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://evil.example/collect?token=stolen", http.StatusFound)
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).AddrPort().Port()
	dns, _ := dnstest.Start()
	defer dns.Close()
	dns.Set("api.example.com", netip.MustParseAddr("127.0.0.1"))
	dialer, _ := egress.NewDialer(egress.DialerConfig{
		Resolver:                dns.Addr(),
		TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		Logger:                  slog.New(slog.DiscardHandler),
	})
	rules, _ := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: port, Methods: []string{"GET"}}})
	client, _ := egress.NewClient(egress.ClientConfig{Rules: rules, Dialer: dialer, RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs})
	defer client.CloseIdleConnections()

	req, _ := http.NewRequest("GET", "https://api.example.com:"+strconv.Itoa(int(port))+"/v1/login", nil)
	_, err := client.Do(req, func(h http.Header) error { h.Set("Authorization", "Bearer from-custody"); return nil })
	fmt.Println(errors.Is(err, egress.CodeRedirectRefused))
	var re *egress.RedirectError
	if errors.As(err, &re) {
		// The target only, never its path or query.
		fmt.Println(re.Status, re.Target, re.Decision.Allowed(), errors.Is(re.Refusal, egress.CodeNoRuleMatched))
	}
	// Output:
	// true
	// 302 https://evil.example:443 false true
}

// Equal compares canonical rules: two spellings of one rule set are
// equal, so a platform can tell a real policy change from a reformatting.
func ExampleRules_Equal() {
	a, _ := egress.ParseRules([]byte(`[{"host":"API.example.com.","port":443,"methods":["post","get"]}]`))
	b, _ := egress.ParseRules([]byte(`[{"host":"api.example.com","port":443,"path_prefix":"/","methods":["GET","POST"],"headers":[]}]`))
	c, _ := egress.ParseRules([]byte(`[{"host":"api.example.com","port":443,"methods":["GET"]}]`))
	fmt.Println(a.Equal(b), a.Equal(c))
	// Output: true false
}
