package egress_test

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/dnstest"
)

const secret = "s3cr3t-t0ken-value"

// A clientRig is a Client in front of a loopback topology the test owns:
// a TLS upstream reached as api.example.com (127.0.0.1, treated as
// public), and a LIVE listener on the private 127.0.0.2 reached as
// rebind.example.com.
type clientRig struct {
	dns      *dnstest.Server
	client   *egress.Client
	rules    *egress.Rules // the client's
	upstream *httptest.Server
	port     uint16
	private  *liveListener
	hits     atomic.Int64
	lastHost atomic.Value // string
	lastAuth atomic.Value // string
	// lastSent is the method, request target and X-Custom header of the
	// last request the upstream received.
	lastSent atomic.Value // string
}

func newClientRig(t *testing.T) *clientRig {
	t.Helper()
	rig := &clientRig{dns: startDNS(t)}
	rig.upstream = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rig.hits.Add(1)
		rig.lastHost.Store(r.Host)
		rig.lastAuth.Store(r.Header.Get("Authorization"))
		rig.lastSent.Store(r.Method + " " + r.URL.RequestURI() + " X-Custom=" + r.Header.Get("X-Custom"))
		if loc, ok := r.URL.Query()["to"]; ok {
			code, _ := strconv.Atoi(r.URL.Query().Get("status"))
			if loc[0] != "" {
				w.Header().Set("Location", loc[0])
			}
			w.WriteHeader(code)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(rig.upstream.Close)
	rig.port = rig.upstream.Listener.Addr().(*net.TCPAddr).AddrPort().Port()
	rig.private = listenLive(t, "127.0.0.2:0")
	rig.dns.Set("api.example.com", netip.MustParseAddr("127.0.0.1"))
	rig.dns.Set("rebind.example.com", netip.MustParseAddr("127.0.0.2"))
	rig.dns.Set("down.example.com", netip.MustParseAddr("127.0.0.1"))

	rules, err := egress.NewRules([]egress.Rule{
		{Host: "api.example.com", Port: rig.port, PathPrefix: "/v1", Methods: []string{"GET", "POST"}, Headers: []string{"Accept"}},
		{Host: "rebind.example.com", Port: rig.private.addrPort().Port(), Methods: []string{"GET"}},
		{Host: "down.example.com", Port: 1, Methods: []string{"GET"}},
		{Host: "nxdomain.example.com", Port: 443, Methods: []string{"GET"}},
	})
	if err != nil {
		t.Fatalf("NewRules: %v", err)
	}
	d, err := egress.NewDialer(egress.DialerConfig{Resolver: rig.dns.Addr(), TreatAsPublicForTesting: loopback1})
	if err != nil {
		t.Fatal(err)
	}
	rig.rules = rules
	rig.client, err = egress.NewClient(egress.ClientConfig{Rules: rules, Dialer: d, RootCAs: rootsOf(rig.upstream)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rig.client.CloseIdleConnections)
	return rig
}

func rootsOf(s *httptest.Server) *x509.CertPool {
	return s.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
}

func (rig *clientRig) url(host, pathQuery string) string {
	return "https://" + host + ":" + strconv.Itoa(int(rig.port)) + pathQuery
}

// do sends one request with an attach hook that adds the credential and
// counts its calls.
func (rig *clientRig) do(t *testing.T, method, rawURL string, hdr ...string) (resp *http.Response, attached int, err error) {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err = rig.client.Do(req, func(h http.Header) error {
		attached++
		h.Set("Authorization", "Bearer "+secret)
		return nil
	})
	if err != nil && strings.Contains(err.Error(), secret) {
		t.Errorf("error %q carries the attached credential", err)
	}
	if resp != nil {
		t.Cleanup(func() { resp.Body.Close() })
	}
	return resp, attached, err
}

func TestClientAllowsAndAttaches(t *testing.T) {
	rig := newClientRig(t)
	resp, attached, err := rig.do(t, "GET", rig.url("API.example.com.", "/v1/items?x=1"), "Accept", "application/json")
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(b) != "ok" || attached != 1 {
		t.Fatalf("got %d %q, attach called %d times", resp.StatusCode, b, attached)
	}
	if h := rig.lastHost.Load(); h != "api.example.com:"+strconv.Itoa(int(rig.port)) {
		t.Errorf("upstream saw Host %q, want the canonical host", h)
	}
	if a := rig.lastAuth.Load(); a != "Bearer "+secret {
		t.Errorf("upstream saw Authorization %q, want the attached credential", a)
	}
}

// TestClientRefusesBeforeDNS checks that a refused request causes no DNS
// query, no connection and no attach.
func TestClientRefusesBeforeDNS(t *testing.T) {
	rig := newClientRig(t)
	tests := []struct {
		method, url string
		hdr         []string
		code        checkfu.Code
	}{
		{"GET", "https://other.example.com/v1/x", nil, egress.CodeNoRuleMatched},
		{"GET", rig.url("api.example.com", "/v2/x"), nil, egress.CodeNoRuleMatched},
		{"DELETE", rig.url("api.example.com", "/v1/x"), nil, egress.CodeMethodDenied},
		{"GET", rig.url("api.example.com", "/v1/x"), []string{"X-Custom", "1"}, egress.CodeHeaderNotAllowed},
		{"GET", rig.url("api.example.com", "/v1/x"), []string{"Cookie", "a=b"}, egress.CodeHeaderDenied},
		{"GET", rig.url("api.example.com", "/v1/x"), []string{"Proxy-Authorization", "Basic eA=="}, egress.CodeHeaderDenied},
		{"GET", rig.url("api.example.com", "/v1/x"), []string{"X-Forwarded-Host", "evil.example.com"}, egress.CodeHeaderDenied},
		{"GET", "https://user:pw@api.example.com/v1/x", nil, egress.CodeRequestInvalid},
	}
	for _, tt := range tests {
		_, attached, err := rig.do(t, tt.method, tt.url, tt.hdr...)
		if !errors.Is(err, tt.code) {
			t.Errorf("%s %s %v: err = %v, want %s", tt.method, tt.url, tt.hdr, err, tt.code)
		}
		if _, ok := egress.UpstreamCodeOf(err); ok {
			t.Errorf("%s %s: refusal also reads as an upstream failure", tt.method, tt.url)
		}
		if attached != 0 {
			t.Errorf("%s %s: attach called for a refused request", tt.method, tt.url)
		}
	}
	if n := rig.hits.Load(); n != 0 {
		t.Errorf("upstream received %d requests, want 0", n)
	}
	if log := rig.dns.Log(); len(log) != 0 {
		t.Errorf("refused requests caused DNS queries: %v", log)
	}
}

// TestClientDialsOnlyPublic points an allowed name at a LIVE private
// listener.
func TestClientDialsOnlyPublic(t *testing.T) {
	rig := newClientRig(t)
	_, _, err := rig.do(t, "GET", "https://rebind.example.com:"+strconv.Itoa(int(rig.private.addrPort().Port()))+"/")
	wantRefusal(t, err, egress.CodeDestinationNotPublic)
	if n := rig.private.accepted.Load(); n != 0 {
		t.Fatalf("the private listener accepted %d connections, want 0", n)
	}
}

func TestClientUpstreamFailures(t *testing.T) {
	rig := newClientRig(t)
	_, attached, err := rig.do(t, "GET", "https://down.example.com:1/")
	wantUpstream(t, err, egress.CodeUpstreamConnectFailed)
	if attached != 1 {
		t.Errorf("attach called %d times for an allowed request", attached)
	}
	_, _, err = rig.do(t, "GET", "https://nxdomain.example.com/")
	wantUpstream(t, err, egress.CodeDNSFailed)
}

// TestClientRefusesRedirects checks every redirect status with absolute,
// relative, scheme-relative, userinfo and missing Locations: none is
// followed, each comes back as redirect_refused carrying the target's
// decision, and no credential leaks into the error.
func TestClientRefusesRedirects(t *testing.T) {
	rig := newClientRig(t)
	port := strconv.Itoa(int(rig.port))
	locations := []struct {
		name, loc  string
		allowed    bool
		targetCode checkfu.Code
		target     string
	}{
		{"absolute allowed", "https://api.example.com:" + port + "/v1/next", true, "", "https://api.example.com:" + port},
		{"absolute denied", "https://evil.example.com/steal", false, egress.CodeNoRuleMatched, "https://evil.example.com:443"},
		{"relative", "/v1/next", true, "", "https://api.example.com:" + port},
		{"relative denied path", "../v2/x", false, egress.CodeNoRuleMatched, "https://api.example.com:" + port},
		{"scheme-relative", "//evil.example.com/x", false, egress.CodeNoRuleMatched, "https://evil.example.com:443"},
		{"userinfo", "https://user:pa55word@api.example.com:" + port + "/v1/x", false, egress.CodeRequestInvalid, ""},
		{"private literal", "http://169.254.169.254/latest/meta-data", false, egress.CodeNoRuleMatched, "http://169.254.169.254:80"},
		{"echoes credential", "https://evil.example.com/?t=" + secret, false, egress.CodeRequestInvalid, ""},
		{"missing", "", false, egress.CodeRequestInvalid, ""},
	}
	for _, status := range []int{301, 302, 303, 307, 308} {
		for _, l := range locations {
			before := rig.hits.Load()
			q := "?status=" + strconv.Itoa(status) + "&to=" + url.QueryEscape(l.loc)
			resp, _, err := rig.do(t, "GET", rig.url("api.example.com", "/v1/r"+q))
			what := fmt.Sprintf("%d %s", status, l.name)
			if resp != nil {
				t.Errorf("%s: got a response %d, want a refusal", what, resp.StatusCode)
				continue
			}
			wantRefusal(t, err, egress.CodeRedirectRefused)
			var re *egress.RedirectError
			if !errors.As(err, &re) {
				t.Fatalf("%s: %v carries no RedirectError", what, err)
			}
			if re.Status != status || re.Decision.Allowed() != l.allowed || re.Target != l.target {
				t.Errorf("%s: RedirectError{%d, %q, %v, %v}, want status %d target %q allowed %v", what, re.Status, re.Target, re.Decision, re.Refusal, status, l.target, l.allowed)
			}
			if !l.allowed && !errors.Is(re.Refusal, l.targetCode) {
				t.Errorf("%s: target refusal %v, want %s", what, re.Refusal, l.targetCode)
			}
			if strings.Contains(err.Error(), "pa55word") || strings.Contains(err.Error(), "steal") {
				t.Errorf("%s: error %q quotes the location's userinfo or path", what, err)
			}
			if n := rig.hits.Load() - before; n != 1 {
				t.Errorf("%s: upstream received %d requests, want exactly 1 (never followed)", what, n)
			}
		}
	}
	// Any other 3xx that carries a Location is refused as a redirect:
	// a client that follows it would go there.
	for _, status := range []int{300, 304, 305, 306, 399} {
		resp, _, err := rig.do(t, "GET", rig.url("api.example.com", "/v1/r?status="+strconv.Itoa(status)+"&to="+url.QueryEscape("https://evil.example.com/steal")))
		var re *egress.RedirectError
		if resp != nil || !errors.As(err, &re) || re.Status != status || re.Target != "https://evil.example.com:443" {
			t.Errorf("%d with a Location: %v, %v, want a redirect refusal", status, resp, err)
		}
	}
	// A 3xx other than 301, 302, 303, 307 and 308 without a Location is
	// not a redirect and comes back as a response.
	for _, status := range []int{300, 304} {
		resp, _, err := rig.do(t, "GET", rig.url("api.example.com", "/v1/r?status="+strconv.Itoa(status)+"&to="))
		if err != nil || resp.StatusCode != status {
			t.Errorf("%d without a Location: %v, %v", status, resp, err)
		}
	}
}

// TestClientIgnoresEnvironmentProxy points the proxy variables at a LIVE
// listener and checks the client never connects to it.
func TestClientIgnoresEnvironmentProxy(t *testing.T) {
	proxy := listenLive(t, "127.0.0.1:0")
	for _, v := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"} {
		t.Setenv(v, "http://"+proxy.Addr().String())
	}
	t.Setenv("NO_PROXY", "")
	rig := newClientRig(t)
	if _, _, err := rig.do(t, "GET", rig.url("api.example.com", "/v1/x")); err != nil {
		t.Fatalf("Do: %v", err)
	}
	if n := proxy.accepted.Load(); n != 0 {
		t.Fatalf("the environment proxy received %d connections", n)
	}
}

// TestClientConfigCannotDisableSafety pins the exported surface: no field
// of ClientConfig, Client, DialerConfig or Dialer can carry a transport, a
// proxy, a redirect policy, a dial hook or a switch.
func TestClientConfigCannotDisableSafety(t *testing.T) {
	fields := func(v any) []string {
		var out []string
		rt := reflect.TypeOf(v)
		for i := 0; i < rt.NumField(); i++ {
			f := rt.Field(i)
			if !f.IsExported() {
				continue
			}
			out = append(out, f.Name)
			switch f.Type.Kind() {
			case reflect.Func, reflect.Interface, reflect.Bool, reflect.Chan:
				t.Errorf("%s.%s has kind %s: a hook or switch could turn a safety property off", rt.Name(), f.Name, f.Type.Kind())
			}
		}
		return out
	}
	check := func(v any, want ...string) {
		t.Helper()
		if got := fields(v); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("%T exported fields = %v, want %v (review any new field for the no-redirect and public-only properties)", v, got, want)
		}
	}
	check(egress.ClientConfig{}, "Rules", "Dialer", "RootCAs", "Timeout")
	check(egress.Client{})
	check(egress.Dialer{})
	check(egress.DialerConfig{}, "Resolver", "TreatAsPublicForTesting", "Exclude", "Timeout", "Logger")

	var zero egress.Client
	req, _ := http.NewRequest("GET", "https://api.example.com/", nil)
	if _, err := zero.Do(req, nil); err == nil {
		t.Errorf("the zero Client sent a request")
	}
	if _, err := egress.NewClient(egress.ClientConfig{}); !errors.Is(err, egress.CodeRulesInvalid) {
		t.Errorf("NewClient without rules = %v", err)
	}
}

func TestClientNeverAttachesToPlaintext(t *testing.T) {
	rig := newClientRig(t)
	plain := "http://api.example.com:" + strconv.Itoa(int(rig.port)) + "/v1/items"
	_, attached, err := rig.do(t, "GET", plain)
	if !errors.Is(err, egress.CodePlaintextCredential) {
		t.Fatalf("GET %s with a credential: err = %v, want %s", plain, err, egress.CodePlaintextCredential)
	}
	if attached != 0 || rig.hits.Load() != 0 {
		t.Errorf("attach called %d times, upstream hit %d times; want 0 and 0", attached, rig.hits.Load())
	}
}

func TestClientAttachErrorSendsNothing(t *testing.T) {
	rig := newClientRig(t)
	req, err := http.NewRequest("GET", rig.url("api.example.com", "/v1/items"), nil)
	if err != nil {
		t.Fatal(err)
	}
	unusable := checkfu.Refuse("credential_unusable", "test: no credential")
	resp, err := rig.client.Do(req, func(h http.Header) error {
		h.Set("Authorization", "Bearer half-written")
		return unusable
	})
	if resp != nil {
		resp.Body.Close()
	}
	if err != unusable {
		t.Fatalf("Do = %v, want the attach error as is", err)
	}
	if n := rig.hits.Load(); n != 0 {
		t.Errorf("upstream hit %d times after attach failed, want 0", n)
	}
}

// A closeRecorder is a request body that records whether it was closed.
type closeRecorder struct {
	io.Reader
	closed atomic.Bool
}

func (b *closeRecorder) Close() error { b.closed.Store(true); return nil }

// TestClientClosesBodyWhenRefused checks that Do closes the request body
// also when it refuses the request before sending it (a workload's
// streamed body must not be left open), as http.Client.Do does.
func TestClientClosesBodyWhenRefused(t *testing.T) {
	rig := newClientRig(t)
	for _, tt := range []struct {
		name, url string
		attach    func(http.Header) error
	}{
		{"no rule", "https://other.example.com/v1", nil},
		{"not canonical", rig.url("api.example.com", "/v1/../x"), nil},
		{"attach error", rig.url("api.example.com", "/v1/items"), func(http.Header) error { return errors.New("test: no credential") }},
	} {
		body := &closeRecorder{Reader: strings.NewReader("payload")}
		req, err := http.NewRequest("POST", tt.url, body)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rig.client.Do(req, tt.attach); err == nil {
			t.Fatalf("%s: Do succeeded", tt.name)
		}
		if !body.closed.Load() {
			t.Errorf("%s: request body left open", tt.name)
		}
	}
	if n := rig.hits.Load(); n != 0 {
		t.Errorf("upstream hit %d times, want 0", n)
	}
}
