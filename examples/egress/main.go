// Command egress is the main job of checkfu on embedded defaults: the
// egress rule engine deciding real requests against a Connection's rules,
// and the reference guard refusing a DNS rebinding attempt against a LIVE
// listener on a private address.
//
// Everything runs on loopback, with no privileges: names resolve through a
// DNS server this program owns, the "public" upstream lives on 127.0.0.1
// (marked public with the testing-only option, which is logged), and the
// rebinding target is a real listener on 127.0.0.2 (or ::1).
//
//	go run ./examples/egress
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"sync/atomic"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/dnstest"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(out io.Writer) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	dns, err := dnstest.Start()
	if err != nil {
		return err
	}
	defer dns.Close()

	// The provider: a TLS upstream on 127.0.0.1, reached as api.example.com.
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/redirect" {
			http.Redirect(w, r, "https://evil.example.com/collect", http.StatusFound)
			return
		}
		auth := r.Header.Get("Authorization")
		fmt.Fprintf(w, "items for %s", auth[:min(len(auth), 6)]+"…")
	}))
	defer upstream.Close()
	port := upstream.Listener.Addr().(*net.TCPAddr).AddrPort().Port()
	dns.Set("api.example.com", netip.MustParseAddr("127.0.0.1"))

	// The rebinding target: a LIVE listener on a private address.
	private, privAddr, err := listenPrivate()
	if err != nil {
		return err
	}
	defer private.Close()
	var privateHits atomic.Int64
	go http.Serve(private, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { //nolint:errcheck // ends when closed
		privateHits.Add(1)
		io.WriteString(w, "internal admin panel")
	}))
	dns.Set("rebind.example.com", privAddr.Addr())

	testBlocks := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	fmt.Fprintf(out, "checkfu egress example: names resolve through a DNS server this program owns (%s);\n", dns.Addr())
	fmt.Fprintf(out, "TESTING ONLY, 127.0.0.1/32 is treated as public so the provider can live on loopback.\n\n")

	// Part 1: the credentialed client applying a Connection's rules.
	rules, err := egress.ParseRules([]byte(`[{"host":"api.example.com","port":` + strconv.Itoa(int(port)) +
		`,"path_prefix":"/v1","methods":["GET","POST"],"headers":["Accept"]}]`))
	if err != nil {
		return err
	}
	dialer, err := egress.NewDialer(egress.DialerConfig{Resolver: dns.Addr(), TreatAsPublicForTesting: testBlocks, Logger: log})
	if err != nil {
		return err
	}
	client, err := egress.NewClient(egress.ClientConfig{Rules: rules, Dialer: dialer, RootCAs: upstream.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs})
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()
	api := "https://api.example.com:" + strconv.Itoa(int(port))
	fmt.Fprintf(out, "1. The rule engine deciding real requests (rule 0: GET,POST %s/v1, header Accept)\n", api)
	for _, c := range []struct {
		method, url string
		header      [2]string
	}{
		{"GET", api + "/v1/items", [2]string{"Accept", "application/json"}},
		{"GET", api + "/admin", [2]string{}},
		{"DELETE", api + "/v1/items", [2]string{}},
		{"GET", api + "/v1/items", [2]string{"Cookie", "session=1"}},
		{"GET", api + "/v1/items", [2]string{"X-Debug", "1"}},
		{"GET", "https://evil.example.com/v1/items", [2]string{}},
		{"GET", api + "/v1/redirect", [2]string{}},
	} {
		req, err := http.NewRequest(c.method, c.url, nil)
		if err != nil {
			return err
		}
		what := c.method + " " + c.url
		if c.header[0] != "" {
			req.Header.Set(c.header[0], c.header[1])
			what += " +" + c.header[0]
		}
		resp, err := client.Do(req, func(h http.Header) error { h.Set("Authorization", "Bearer example-credential"); return nil })
		fmt.Fprintf(out, "   %-58s -> %s\n", what, clientOutcome(resp, err))
	}
	fmt.Fprintf(out, "   DNS queries for evil.example.com: %d (the rule is matched before any lookup)\n\n", dns.Queries("evil.example.com"))

	// Part 2: the guard enforcing a workload's network policy.
	policy, err := egress.ParseNetworkPolicy([]byte(`{"type":"allowlist","allowed_hosts":["api.example.com:` +
		strconv.Itoa(int(port)) + `","rebind.example.com:` + strconv.Itoa(int(privAddr.Port())) + `"]}`))
	if err != nil {
		return err
	}
	compiled, err := policy.Compile(nil)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	guard, err := egress.NewGuard(egress.GuardConfig{Policy: compiled, Listener: ln, Resolver: dns.Addr(), TreatAsPublicForTesting: testBlocks,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		return err
	}
	go guard.Serve() //nolint:errcheck // returns ErrServerClosed after Shutdown
	defer guard.Shutdown(context.Background())
	fmt.Fprintf(out, "2. The guard (allowlist: api.example.com, rebind.example.com) listening on %s\n", ln.Addr())
	fmt.Fprintf(out, "   rebind.example.com resolves to %s, where a LIVE listener serves an \"internal admin panel\"\n", privAddr)
	workload := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: ln.Addr().String()}), DisableKeepAlives: true}}
	for _, u := range []string{
		"http://rebind.example.com:" + strconv.Itoa(int(privAddr.Port())) + "/",
		"http://" + privAddr.String() + "/",
		"http://metadata.example.com/latest/meta-data/",
	} {
		resp, err := workload.Get(u)
		if err != nil {
			return err
		}
		resp.Body.Close()
		fmt.Fprintf(out, "   %-58s -> %d %s: %s\n", "GET "+u, resp.StatusCode, egress.RefusalHeader, resp.Header.Get(egress.RefusalHeader))
	}
	fmt.Fprintf(out, "   requests that reached the private listener: %d\n", privateHits.Load())
	if privateHits.Load() != 0 {
		return errors.New("the rebinding attempt reached the private listener")
	}
	return nil
}

// listenPrivate starts a listener on 127.0.0.2, or on ::1 where only
// 127.0.0.1 is configured (macOS).
func listenPrivate() (net.Listener, netip.AddrPort, error) {
	for _, a := range []string{"127.0.0.2:0", "[::1]:0"} {
		if ln, err := net.Listen("tcp", a); err == nil {
			return ln, ln.Addr().(*net.TCPAddr).AddrPort(), nil
		}
	}
	return nil, netip.AddrPort{}, errors.New("no private loopback address to listen on (tried 127.0.0.2 and ::1)")
}

// clientOutcome describes what Client.Do returned.
func clientOutcome(resp *http.Response, err error) string {
	if err == nil {
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("allowed: %d %q", resp.StatusCode, b)
	}
	code, ok := checkfu.CodeOf(err)
	if !ok {
		return "upstream failure: " + err.Error()
	}
	var re *egress.RedirectError
	if errors.As(err, &re) {
		tc, _ := checkfu.CodeOf(re.Refusal)
		return fmt.Sprintf("refused: %s (target %s would be: %s)", code, re.Target, tc)
	}
	return "refused: " + string(code)
}
