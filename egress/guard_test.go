package egress_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/dnstest"
)

// A guardRig is a guard in front of a loopback topology the test owns:
// a DNS server, a legitimate upstream on 127.0.0.1 (treated as public)
// and a LIVE HTTP listener on the private 127.0.0.2.
type guardRig struct {
	dns      *dnstest.Server
	guard    *egress.Guard
	proxyURL *url.URL
	upstream *httptest.Server
	upPort   string
	private  *liveListener
	privPort string

	mu   sync.Mutex
	seen []*http.Request // requests the upstream received
}

func newGuardRig(t *testing.T, policy string) *guardRig {
	t.Helper()
	rig := &guardRig{dns: startDNS(t)}
	rig.upstream = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rig.mu.Lock()
		rig.seen = append(rig.seen, r.Clone(context.Background()))
		rig.mu.Unlock()
		switch r.URL.Path {
		case "/echo":
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %s ua=%q hop=%q body=%s", r.Method, r.URL.RequestURI(), r.Header.Get("User-Agent"), r.Header.Get("X-Hop"), b)
			return
		case "/spoof":
			// A hostile destination dressing its own answer as the
			// guard's refusal and failure.
			w.Header().Set(egress.RefusalHeader, string(egress.CodeDestinationNotPublic))
			w.Header().Set(egress.UpstreamFailureHeader, string(egress.CodeDNSFailed))
			w.WriteHeader(http.StatusForbidden)
			return
		case "/stream":
			w.Header().Set("Connection", "X-Upstream-Hop")
			w.Header().Set("X-Upstream-Hop", "1")
			for i := range 3 {
				fmt.Fprintf(w, "part%d;", i)
				w.(http.Flusher).Flush()
			}
			return
		}
		if loc := r.URL.Query().Get("redirect"); loc != "" {
			http.Redirect(w, r, loc, http.StatusFound)
			return
		}
		fmt.Fprintf(w, "upstream saw Host %s", r.Host)
	}))
	t.Cleanup(rig.upstream.Close)
	_, rig.upPort, _ = net.SplitHostPort(rig.upstream.Listener.Addr().String())
	rig.private = listenLive(t, "127.0.0.2:0")
	rig.privPort = strconv.Itoa(int(rig.private.addrPort().Port()))
	rig.dns.Set("legit.example.test", netip.MustParseAddr("127.0.0.1"))
	rig.dns.Set("rebind.example.test", netip.MustParseAddr("127.0.0.2"))
	rig.dns.Set("down.example.test", netip.MustParseAddr("127.0.0.1"))

	doc := policy
	for k, v := range map[string]string{"$UP": rig.upPort, "$PRIV": rig.privPort} {
		doc = strings.ReplaceAll(doc, k, v)
	}
	p, err := egress.ParseNetworkPolicy([]byte(doc))
	if err != nil {
		t.Fatalf("policy %s: %v", doc, err)
	}
	cp, err := p.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g, err := egress.NewGuard(egress.GuardConfig{
		Policy: cp, Listener: ln, Resolver: rig.dns.Addr(),
		TreatAsPublicForTesting: loopback1,
		Logger:                  slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- g.Serve() }()
	t.Cleanup(func() {
		g.Shutdown(context.Background())
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve = %v", err)
		}
	})
	rig.guard = g
	rig.proxyURL = &url.URL{Scheme: "http", Host: ln.Addr().String()}
	return rig
}

// client returns an HTTP client that goes through the guard and does not
// follow redirects.
func (rig *guardRig) client(t *testing.T) *http.Client {
	tr := &http.Transport{Proxy: http.ProxyURL(rig.proxyURL), DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type outcome struct {
	status   int
	refusal  string
	upstream string
	body     string
}

func (rig *guardRig) get(t *testing.T, c *http.Client, rawURL string, hdr ...string) outcome {
	t.Helper()
	req, err := http.NewRequest("GET", rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", rawURL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return outcome{resp.StatusCode, resp.Header.Get(egress.RefusalHeader), resp.Header.Get(egress.UpstreamFailureHeader), string(b)}
}

// connect sends a raw CONNECT through the guard and returns the status and
// the refusal code.
func (rig *guardRig) connect(t *testing.T, target string) outcome {
	t.Helper()
	c, err := net.Dial("tcp", rig.proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: "CONNECT"})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	resp.Body.Close()
	return outcome{status: resp.StatusCode, refusal: resp.Header.Get(egress.RefusalHeader), upstream: resp.Header.Get(egress.UpstreamFailureHeader)}
}

func wantOutcome(t *testing.T, what string, got outcome, status int, code string) {
	t.Helper()
	if got.status != status {
		t.Errorf("%s: status %d (%q), want %d", what, got.status, got.body, status)
	}
	switch status {
	case http.StatusForbidden:
		if got.refusal != code || got.upstream != "" {
			t.Errorf("%s: refusal %q upstream %q, want refusal %q", what, got.refusal, got.upstream, code)
		}
	case http.StatusBadGateway:
		if got.upstream != code || got.refusal != "" {
			t.Errorf("%s: refusal %q upstream %q, want upstream %q", what, got.refusal, got.upstream, code)
		}
	default:
		if got.refusal != "" || got.upstream != "" {
			t.Errorf("%s: refusal %q upstream %q, want neither", what, got.refusal, got.upstream)
		}
	}
}

const allowBoth = `{"type":"allowlist","allowed_hosts":["legit.example.test:$UP","rebind.example.test:$PRIV","down.example.test:1","nxdomain.example.test:$UP"]}`

// TestGuardRebinding is the honest rebinding case: an allowlisted name
// resolves to a private address where a LIVE listener accepts. The guard
// must refuse with 403 destination_not_public, and the listener must
// never see a connection; the legitimate upstream stays reachable.
func TestGuardRebinding(t *testing.T) {
	rig := newGuardRig(t, allowBoth)
	c := rig.client(t)

	got := rig.get(t, c, "http://rebind.example.test:"+rig.privPort+"/")
	wantOutcome(t, "GET rebind", got, http.StatusForbidden, string(egress.CodeDestinationNotPublic))
	// The workload learns the code, not where the name resolved: the
	// guard must not be an oracle for internal DNS.
	if strings.Contains(got.body, "127.0.0.2") {
		t.Errorf("the 403 body tells the workload the private address: %q", got.body)
	}
	wantOutcome(t, "CONNECT rebind", rig.connect(t, "rebind.example.test:"+rig.privPort), http.StatusForbidden, string(egress.CodeDestinationNotPublic))
	if n := rig.private.accepted.Load(); n != 0 {
		t.Fatalf("the private listener accepted %d connections, want 0", n)
	}

	got = rig.get(t, c, "http://legit.example.test:"+rig.upPort+"/x?y=1")
	wantOutcome(t, "GET legit", got, http.StatusOK, "")
	if want := "upstream saw Host legit.example.test:" + rig.upPort; got.body != want {
		t.Errorf("body %q, want %q", got.body, want)
	}
	wantOutcome(t, "CONNECT legit", rig.connect(t, "legit.example.test:"+rig.upPort), http.StatusOK, "")
}

// TestGuardModes checks none, unrestricted and allowlist, and that every
// mode but none still refuses non-public destinations.
func TestGuardModes(t *testing.T) {
	t.Run("none", func(t *testing.T) {
		rig := newGuardRig(t, `{"type":"none"}`)
		c := rig.client(t)
		for _, u := range []string{"http://legit.example.test:" + rig.upPort + "/", "http://127.0.0.1:" + rig.upPort + "/", "http://8.8.8.8/"} {
			wantOutcome(t, "none GET "+u, rig.get(t, c, u), http.StatusForbidden, string(egress.CodeEgressDisabled))
		}
		wantOutcome(t, "none CONNECT", rig.connect(t, "legit.example.test:"+rig.upPort), http.StatusForbidden, string(egress.CodeEgressDisabled))
		if n := len(rig.dns.Log()); n != 0 {
			t.Errorf("none made %d DNS queries", n)
		}
	})
	t.Run("unrestricted", func(t *testing.T) {
		rig := newGuardRig(t, `{"type":"unrestricted"}`)
		c := rig.client(t)
		wantOutcome(t, "GET legit", rig.get(t, c, "http://legit.example.test:"+rig.upPort+"/"), http.StatusOK, "")
		wantOutcome(t, "GET 127.0.0.1 (treated as public)", rig.get(t, c, "http://127.0.0.1:"+rig.upPort+"/"), http.StatusOK, "")
		for _, u := range []string{
			"http://rebind.example.test:" + rig.privPort + "/",
			"http://127.0.0.2:" + rig.privPort + "/",
			"http://[::ffff:127.0.0.2]:" + rig.privPort + "/",
			"http://" + rig.proxyURL.Host + "/", // the guard itself
		} {
			wantOutcome(t, "unrestricted GET "+u, rig.get(t, c, u), http.StatusForbidden, string(egress.CodeDestinationNotPublic))
		}
		wantOutcome(t, "unrestricted CONNECT private literal", rig.connect(t, "127.0.0.2:"+rig.privPort), http.StatusForbidden, string(egress.CodeDestinationNotPublic))
		if n := rig.private.accepted.Load(); n != 0 {
			t.Fatalf("the private listener accepted %d connections, want 0", n)
		}
	})
	t.Run("allowlist", func(t *testing.T) {
		rig := newGuardRig(t, `{"type":"allowlist","allowed_hosts":["legit.example.test:$UP"]}`)
		c := rig.client(t)
		wantOutcome(t, "GET legit", rig.get(t, c, "http://LEGIT.example.test.:"+rig.upPort+"/"), http.StatusOK, "")
		before := len(rig.dns.Log())
		for _, u := range []string{
			"http://legit.example.test:1/",
			"http://other.example.test:" + rig.upPort + "/",
			"http://127.0.0.1:" + rig.upPort + "/",
		} {
			wantOutcome(t, "allowlist GET "+u, rig.get(t, c, u), http.StatusForbidden, string(egress.CodeHostNotAllowed))
		}
		wantOutcome(t, "allowlist CONNECT", rig.connect(t, "other.example.test:443"), http.StatusForbidden, string(egress.CodeHostNotAllowed))
		if n := rig.dns.Queries("other.example.test"); n != 0 || len(rig.dns.Log()) != before {
			t.Errorf("denied names caused DNS queries: %v", rig.dns.Log()[before:])
		}
	})
}

// TestGuardUpstreamFailures checks that outages are 502 with their own
// code and never a refusal, against a closed port and an unknown name.
func TestGuardUpstreamFailures(t *testing.T) {
	rig := newGuardRig(t, allowBoth)
	c := rig.client(t)
	wantOutcome(t, "closed port", rig.get(t, c, "http://down.example.test:1/"), http.StatusBadGateway, string(egress.CodeUpstreamConnectFailed))
	wantOutcome(t, "nxdomain", rig.get(t, c, "http://nxdomain.example.test:"+rig.upPort+"/"), http.StatusBadGateway, string(egress.CodeDNSFailed))
	wantOutcome(t, "CONNECT closed port", rig.connect(t, "down.example.test:1"), http.StatusBadGateway, string(egress.CodeUpstreamConnectFailed))
}

// TestGuardHeaders checks that the guard sends the canonical Host and no
// forwarding or proxy headers.
func TestGuardHeaders(t *testing.T) {
	rig := newGuardRig(t, allowBoth)
	c := rig.client(t)
	got := rig.get(t, c, "http://legit.example.test:"+rig.upPort+"/h",
		"Proxy-Authorization", "Basic c2VjcmV0", "X-Forwarded-For", "10.0.0.1", "Forwarded", "for=10.0.0.1", "Proxy-Connection", "keep-alive", "Accept", "text/plain")
	wantOutcome(t, "GET", got, http.StatusOK, "")
	rig.mu.Lock()
	defer rig.mu.Unlock()
	r := rig.seen[len(rig.seen)-1]
	for _, h := range []string{"Proxy-Authorization", "X-Forwarded-For", "Forwarded", "Proxy-Connection", "X-Forwarded-Host", "X-Forwarded-Proto"} {
		if v := r.Header.Get(h); v != "" {
			t.Errorf("upstream received %s: %q", h, v)
		}
	}
	if r.Header.Get("Accept") != "text/plain" {
		t.Errorf("upstream lost the Accept header")
	}
}

// TestGuardRedirectReentersGuard checks that the guard never follows a
// redirect itself: the 3xx goes back to the workload, and following it is
// a new request the guard checks like any other.
func TestGuardRedirectReentersGuard(t *testing.T) {
	rig := newGuardRig(t, allowBoth)
	loc := url.QueryEscape("http://rebind.example.test:" + rig.privPort + "/")
	got := rig.get(t, rig.client(t), "http://legit.example.test:"+rig.upPort+"/r?redirect="+loc)
	wantOutcome(t, "redirect not followed", got, http.StatusFound, "")

	tr := &http.Transport{Proxy: http.ProxyURL(rig.proxyURL), DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	following := &http.Client{Transport: tr}
	got = rig.get(t, following, "http://legit.example.test:"+rig.upPort+"/r?redirect="+loc)
	wantOutcome(t, "redirect followed by the workload", got, http.StatusForbidden, string(egress.CodeDestinationNotPublic))
	if n := rig.private.accepted.Load(); n != 0 {
		t.Fatalf("the private listener accepted %d connections, want 0", n)
	}
}

// TestGuardConnectTLS checks a real TLS exchange through a CONNECT tunnel.
func TestGuardConnectTLS(t *testing.T) {
	tlsUp := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "tls ok") }))
	defer tlsUp.Close()
	_, port, _ := net.SplitHostPort(tlsUp.Listener.Addr().String())
	rig2 := newGuardRig(t, `{"type":"allowlist","allowed_hosts":["legit.example.test:`+port+`"]}`)
	tr := tlsUp.Client().Transport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyURL(rig2.proxyURL)
	tr.TLSClientConfig = &tls.Config{RootCAs: tlsUp.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, ServerName: "example.com"}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("https://legit.example.test:" + port + "/")
	if err != nil {
		t.Fatalf("GET through tunnel: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "tls ok" {
		t.Errorf("body %q", b)
	}
}

func TestNewGuardRefusesMissingParts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := egress.NewGuard(egress.GuardConfig{Listener: ln}); !errors.Is(err, egress.CodePolicyInvalid) {
		t.Errorf("NewGuard without policy = %v", err)
	}
	cp, _ := egress.NoNetwork().Compile(nil)
	if _, err := egress.NewGuard(egress.GuardConfig{Policy: cp}); err == nil {
		t.Errorf("NewGuard without listener succeeded")
	}
	if _, err := egress.NewGuard(egress.GuardConfig{Policy: cp, Listener: ln, TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Errorf("NewGuard with 10/8 as public = %v", err)
	}
}
