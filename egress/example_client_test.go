package egress_test

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

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/dnstest"
)

func newLoopbackListener() net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	return ln
}

// Rules.Allow decides a request once, before anything is spent on it;
// Client.Send then sends what was allowed without deciding it again,
// because the Client holds the same Rules. A Client decides an Allowed
// that other Rules allowed with its own, and refuses what they refuse.
func ExampleClient_Send() {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s authorized=%t", r.Method, r.URL.Path, r.Header.Get("Authorization") == "Bearer from-custody")
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
	rules, _ := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: port, PathPrefix: "/v1", Methods: []string{"GET"}}})
	client, _ := egress.NewClient(egress.ClientConfig{Rules: rules, Dialer: dialer, RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs})
	defer client.CloseIdleConnections()
	attach := func(h http.Header) error { h.Set("Authorization", "Bearer from-custody"); return nil }

	req, _ := http.NewRequest("GET", "https://api.example.com:"+strconv.Itoa(int(port))+"/v1/repos", nil)
	allowed, err := rules.Allow(req)
	if err != nil {
		panic(err) // refused: nothing spent, nothing sent
	}
	req.URL.Path = "/admin" // too late: the Allowed holds what was decided
	resp, err := client.Send(context.Background(), &allowed, attach)
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body))

	// Other rules allowed it; the Client's do not.
	other, _ := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: port, Methods: []string{"DELETE"}}})
	req, _ = http.NewRequest("DELETE", "https://api.example.com:"+strconv.Itoa(int(port))+"/v1/repos", nil)
	allowed, _ = other.Allow(req)
	_, err = client.Send(context.Background(), &allowed, attach)
	fmt.Println(errors.Is(err, egress.CodeMethodDenied))
	// Output:
	// 200 GET /v1/repos authorized=true
	// true
}

// NewClient builds the custody edge's HTTP client. Here it reaches a
// loopback TLS server as api.example.com, through a DNS server the
// example owns and a Dialer that treats 127.0.0.1 as public (for tests
// only).
func ExampleNewClient() {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s authorized=%t", r.Method, r.Host, r.Header.Get("Authorization") == "Bearer from-custody")
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

	rules, _ := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: port, PathPrefix: "/v1", Methods: []string{"GET"}}})
	client, err := egress.NewClient(egress.ClientConfig{
		Rules:   rules,
		Dialer:  dialer,
		RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs,
	})
	if err != nil {
		panic(err)
	}
	defer client.CloseIdleConnections()

	req, _ := http.NewRequest("GET", "https://API.example.com:"+strconv.Itoa(int(port))+"/v1/repos", nil)
	resp, err := client.Do(req, func(h http.Header) error {
		h.Set("Authorization", "Bearer from-custody") // after the decision only
		return nil
	})
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, strings.Replace(string(body), strconv.Itoa(int(port)), "PORT", 1))

	// Without rules there is no client.
	_, err = egress.NewClient(egress.ClientConfig{})
	fmt.Println(errors.Is(err, egress.CodeRulesInvalid))
	// Output:
	// 200 GET api.example.com:PORT authorized=true
	// true
}

// A permitted request that fails on the way is an *UpstreamError, never
// a refusal: callers branch on the two separately.
func ExampleUpstreamCodeOf() {
	dns, _ := dnstest.Start()
	defer dns.Close()
	ln := newLoopbackListener()
	port := ln.Addr().(*net.TCPAddr).AddrPort().Port()
	ln.Close() // nothing accepts on this port any more
	dns.Set("api.example.com", netip.MustParseAddr("127.0.0.1"))
	dialer, _ := egress.NewDialer(egress.DialerConfig{
		Resolver:                dns.Addr(),
		TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		Logger:                  slog.New(slog.DiscardHandler),
	})
	rules, _ := egress.NewRules([]egress.Rule{
		{Host: "api.example.com", Port: port, Methods: []string{"GET"}},
		{Host: "gone.example.com", Port: 443, Methods: []string{"GET"}},
	})
	client, _ := egress.NewClient(egress.ClientConfig{Rules: rules, Dialer: dialer})
	defer client.CloseIdleConnections()

	for _, url := range []string{
		"https://api.example.com:" + strconv.Itoa(int(port)) + "/",
		"https://gone.example.com/", // the DNS server has no answer for it
		"https://other.example.com/",
	} {
		req, _ := http.NewRequest("GET", url, nil)
		_, err := client.Do(req, nil)
		if code, ok := egress.UpstreamCodeOf(err); ok {
			fmt.Println("upstream failure:", code, errors.Is(err, egress.CodeUpstreamConnectFailed))
		} else if code, ok := checkfu.CodeOf(err); ok {
			fmt.Println("refused:", code)
		}
	}
	// Output:
	// upstream failure: upstream_connect_failed true
	// upstream failure: dns_failed false
	// refused: no_rule_matched
}

// The zero Dialer dials public addresses only; a loopback, private or
// metadata address is refused before any connection is attempted.
func ExampleDialer_DialContext() {
	var d egress.Dialer
	for _, addr := range []string{"127.0.0.1:22", "169.254.169.254:80", "[::ffff:10.0.0.1]:443"} {
		_, err := d.DialContext(context.Background(), "tcp", addr)
		code, _ := checkfu.CodeOf(err)
		fmt.Println(addr, code)
	}
	// Output:
	// 127.0.0.1:22 destination_not_public
	// 169.254.169.254:80 destination_not_public
	// [::ffff:10.0.0.1]:443 destination_not_public
}

// RulesSchema lets another tool (an editor, a CI check) validate a rules
// document's shape; ParseRules applies the same schema and then
// canonicalises.
func ExampleRulesSchema() {
	c := jsonschema.NewCompiler()
	if err := c.AddResource("rules.schema.json", strings.NewReader(string(egress.RulesSchema()))); err != nil {
		panic(err)
	}
	schema, err := c.Compile("rules.schema.json")
	if err != nil {
		panic(err)
	}
	for _, doc := range []string{
		`[{"host":"api.example.com","port":443,"methods":["GET"]}]`,
		`[{"host":"api.example.com","port":443,"methods":["GET"],"headers":["Accept"],"allow_all":true}]`,
		`[]`,
	} {
		var v any
		d := json.NewDecoder(strings.NewReader(doc))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			panic(err)
		}
		fmt.Println(schema.Validate(v) == nil)
	}
	// Output:
	// true
	// false
	// false
}
