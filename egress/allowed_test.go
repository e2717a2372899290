package egress_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/egresstest"
)

// send sends a through the rig's client with an attach hook that adds the
// credential and counts its calls.
func (rig *clientRig) send(t *testing.T, a *egress.Allowed) (attached int, err error) {
	t.Helper()
	resp, err := rig.client.Send(context.Background(), a, func(h http.Header) error {
		attached++
		h.Set("Authorization", "Bearer "+secret)
		return nil
	})
	if err != nil && strings.Contains(err.Error(), secret) {
		t.Errorf("error %q carries the attached credential", err)
	}
	if resp != nil {
		resp.Body.Close()
	}
	return attached, err
}

// allow builds method rawURL with the header pairs hdr and lets rules
// allow it.
func allow(t *testing.T, rules *egress.Rules, method, rawURL string, hdr ...string) *egress.Allowed {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	a, err := rules.Allow(req)
	if err != nil {
		t.Fatalf("Allow(%s %s %v): %v", method, rawURL, hdr, err)
	}
	return &a
}

// TestSendSendsWhatWasAllowed checks that Send sends the canonical request
// the rules decided, with the credential attached, and nothing that
// changed the request it was made from after the decision.
func TestSendSendsWhatWasAllowed(t *testing.T) {
	rig := newClientRig(t)
	req, err := http.NewRequest("GET", rig.url("API.example.com.", "/v1/items?x=1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	a, err := rig.rules.Allow(req)
	if err != nil {
		t.Fatalf("Allow: %v", err)
	}
	// Every change after the decision: none of it may reach the wire.
	req.Method = "DELETE"
	req.URL.Host, req.Host, req.URL.Path = "evil.example.com", "evil.example.com", "/v2/x"
	req.Header.Set("X-Custom", "smuggled")
	req.Header.Set("Cookie", "a=b")
	attached, err := rig.send(t, &a)
	if err != nil || attached != 1 {
		t.Fatalf("Send = %v, attach called %d times; want nil and 1", err, attached)
	}
	if got, want := rig.lastSent.Load(), "GET /v1/items?x=1 X-Custom="; got != want {
		t.Errorf("upstream received %q, want %q", got, want)
	}
	if h := rig.lastHost.Load(); h != "api.example.com:"+strconv.Itoa(int(rig.port)) {
		t.Errorf("upstream saw Host %q, want the canonical host", h)
	}
	if got := rig.lastAuth.Load(); got != "Bearer "+secret {
		t.Errorf("upstream saw Authorization %q, want the attached credential", got)
	}
	// What attach added went out on the request sent, not into the
	// Allowed.
	if h := a.Request().Header; len(h) != 1 || h.Get("Accept") != "application/json" {
		t.Errorf("after Send the Allowed holds the headers %v, want only Accept", h)
	}
}

// TestSendDecidesWhatOtherRulesAllowed checks that a Client decides an
// Allowed that other rules allowed with its own, and refuses what they
// refuse before any DNS lookup, attach or connection.
func TestSendDecidesWhatOtherRulesAllowed(t *testing.T) {
	rig := newClientRig(t)
	other, err := egress.NewRules([]egress.Rule{
		{Host: "evil.example.com", Port: 443, Methods: []string{"GET"}},
		{Host: "api.example.com", Port: rig.port, Methods: []string{"DELETE", "GET"}, Headers: []string{"Accept", "X-Custom"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method, url string
		hdr         []string
		code        checkfu.Code
	}{
		{"GET", "https://evil.example.com/x", nil, egress.CodeNoRuleMatched},
		{"GET", rig.url("api.example.com", "/v2/x"), nil, egress.CodeNoRuleMatched},
		{"DELETE", rig.url("api.example.com", "/v1/x"), nil, egress.CodeMethodDenied},
		{"GET", rig.url("api.example.com", "/v1/x"), []string{"X-Custom", "1"}, egress.CodeHeaderNotAllowed},
	}
	for _, tt := range tests {
		a := allow(t, other, tt.method, tt.url, tt.hdr...)
		attached, err := rig.send(t, a)
		if !errors.Is(err, tt.code) {
			t.Errorf("%s %s %v allowed by other rules: Send = %v, want %s", tt.method, tt.url, tt.hdr, err, tt.code)
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
	// What the Client's rules allow too is decided again, and sent.
	a := allow(t, other, "GET", rig.url("api.example.com", "/v1/x"), "Accept", "*/*")
	if attached, err := rig.send(t, a); err != nil || attached != 1 {
		t.Errorf("GET /v1/x allowed by both: Send = %v, attach called %d times", err, attached)
	}
}

// TestSendRefusesWhatNoRulesAllowed checks that a nil or zero Allowed is
// never sent, that the zero Client sends nothing, and that a Client whose
// Rules were emptied sends neither the zero Allowed (which names no
// rules, like the emptied Rules) nor one its former rules allowed.
func TestSendRefusesWhatNoRulesAllowed(t *testing.T) {
	rig := newClientRig(t)
	for name, a := range map[string]*egress.Allowed{"nil": nil, "zero": {}} {
		attached, err := rig.send(t, a)
		if !errors.Is(err, egress.CodeRequestInvalid) || attached != 0 {
			t.Errorf("Send(%s Allowed) = %v with %d attaches, want %s and none", name, err, attached, egress.CodeRequestInvalid)
		}
	}
	var zero *egress.Client
	if _, err := zero.Send(context.Background(), allow(t, rig.rules, "GET", rig.url("api.example.com", "/v1/x")), nil); !errors.Is(err, egress.CodeRulesInvalid) {
		t.Errorf("the zero Client's Send = %v, want %s", err, egress.CodeRulesInvalid)
	}

	rules, err := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: rig.port, Methods: []string{"GET"}}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := egress.NewDialer(egress.DialerConfig{Resolver: rig.dns.Addr(), TreatAsPublicForTesting: loopback1})
	if err != nil {
		t.Fatal(err)
	}
	client, err := egress.NewClient(egress.ClientConfig{Rules: rules, Dialer: d, RootCAs: rootsOf(rig.upstream)})
	if err != nil {
		t.Fatal(err)
	}
	defer client.CloseIdleConnections()
	former := allow(t, rules, "GET", rig.url("api.example.com", "/v1/x"))
	*rules = egress.Rules{}
	for name, tt := range map[string]struct {
		a    *egress.Allowed
		code checkfu.Code
	}{"zero": {&egress.Allowed{}, egress.CodeRequestInvalid}, "former": {former, egress.CodeNoRuleMatched}} {
		resp, err := client.Send(context.Background(), tt.a, nil)
		if resp != nil {
			resp.Body.Close()
		}
		if !errors.Is(err, tt.code) {
			t.Errorf("Send(%s Allowed) through emptied Rules = %v, want %s", name, err, tt.code)
		}
	}
	if n := rig.hits.Load(); n != 0 {
		t.Errorf("upstream received %d requests, want 0", n)
	}
}

// TestSendSeesARulesChange checks that an Allowed the Client's Rules
// allowed is decided again once the Rules changed (UnmarshalJSON into
// them, or another Rules assigned to them), and refused when the new
// rules refuse it.
func TestSendSeesARulesChange(t *testing.T) {
	rig := newClientRig(t)
	v1 := allow(t, rig.rules, "GET", rig.url("api.example.com", "/v1/items"))
	before, err := rig.rules.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	doc := `[{"host":"api.example.com","port":` + strconv.Itoa(int(rig.port)) + `,"path_prefix":"/v2","methods":["GET"],"headers":[]}]`
	if err := json.Unmarshal([]byte(doc), rig.rules); err != nil {
		t.Fatal(err)
	}
	if _, err := rig.send(t, v1); !errors.Is(err, egress.CodeNoRuleMatched) {
		t.Errorf("Send of /v1 after the rules became /v2 only = %v, want %s", err, egress.CodeNoRuleMatched)
	}
	v2 := allow(t, rig.rules, "GET", rig.url("api.example.com", "/v2/items"))
	old, err := egress.ParseRules(before)
	if err != nil {
		t.Fatal(err)
	}
	*rig.rules = *old
	if _, err := rig.send(t, v2); !errors.Is(err, egress.CodeNoRuleMatched) {
		t.Errorf("Send of /v2 after the /v1 rules were assigned back = %v, want %s", err, egress.CodeNoRuleMatched)
	}
	if n := rig.hits.Load(); n != 0 {
		t.Errorf("upstream received %d requests, want 0", n)
	}
	// What the rules assigned allow is sent.
	if _, err := rig.send(t, allow(t, old, "GET", rig.url("api.example.com", "/v1/items"))); err != nil {
		t.Errorf("Send of /v1 allowed by the rules assigned: %v", err)
	}
}

// TestSendClosesBodyWhenRefused checks that Send closes the body an
// Allowed holds whenever it sends nothing, as Do does.
func TestSendClosesBodyWhenRefused(t *testing.T) {
	rig := newClientRig(t)
	other, err := egress.NewRules([]egress.Rule{{Host: "evil.example.com", Port: 443, Methods: []string{"POST"}}})
	if err != nil {
		t.Fatal(err)
	}
	var zero *egress.Client
	for _, tt := range []struct {
		name   string
		rules  *egress.Rules
		url    string
		client *egress.Client
		attach func(http.Header) error
	}{
		{"other rules", other, "https://evil.example.com/x", rig.client, nil},
		{"zero client", rig.rules, rig.url("api.example.com", "/v1/items"), zero, nil},
		{"plain http", rig.rules, "http://api.example.com:" + strconv.Itoa(int(rig.port)) + "/v1/items", rig.client, func(http.Header) error { return nil }},
		{"attach error", rig.rules, rig.url("api.example.com", "/v1/items"), rig.client, func(http.Header) error { return errors.New("test: no credential") }},
	} {
		body := &closeRecorder{Reader: strings.NewReader("payload")}
		req, err := http.NewRequest("POST", tt.url, body)
		if err != nil {
			t.Fatal(err)
		}
		a, err := tt.rules.Allow(req)
		if err != nil {
			t.Fatalf("%s: Allow: %v", tt.name, err)
		}
		if body.closed.Load() {
			t.Fatalf("%s: Allow closed the body", tt.name)
		}
		if _, err := tt.client.Send(context.Background(), &a, tt.attach); err == nil {
			t.Fatalf("%s: Send succeeded", tt.name)
		}
		if !body.closed.Load() {
			t.Errorf("%s: request body left open", tt.name)
		}
	}
	if n := rig.hits.Load(); n != 0 {
		t.Errorf("upstream hit %d times, want 0", n)
	}
}

// TestAllowedRequestIsACopy checks that changing what Request returns
// changes nothing in the Allowed.
func TestAllowedRequestIsACopy(t *testing.T) {
	rules, err := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: 443, Methods: []string{"GET"}, Headers: []string{"Accept"}}})
	if err != nil {
		t.Fatal(err)
	}
	a := allow(t, rules, "GET", "https://api.example.com/v1", "Accept", "text/plain")
	r := a.Request()
	r.Host, r.Path = "evil.example.com", "/admin"
	r.Header.Set("Accept", "changed")
	r.Header.Set("X-Custom", "1")
	if got := a.Request(); got.Host != "api.example.com" || got.Path != "/v1" || len(got.Header) != 1 || got.Header.Get("Accept") != "text/plain" {
		t.Errorf("after changing a copy, the Allowed holds %+v", got)
	}
}

// TestAllowIsCanonicalThenDecide: for any request, Allow allows exactly
// what CanonicalRequest then Decide allow, refuses with the same code,
// and holds the canonical request decided.
func TestAllowIsCanonicalThenDecide(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rs := egresstest.Rules(4).Draw(t, "rules")
		var req *egress.Request
		if rapid.Bool().Draw(t, "hand-built") {
			req = egresstest.HandBuiltRequest(rs).Draw(t, "request")
		} else {
			req = egresstest.Request(rs).Draw(t, "request")
		}
		hr := &http.Request{Method: req.Method, URL: req.URL(), Header: req.Header.Clone()}
		a, err := rs.Allow(hr)
		want, werr := egress.CanonicalRequest(hr)
		if werr == nil {
			_, werr = rs.Decide(&want)
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("Allow = %v; CanonicalRequest then Decide = %v", err, werr)
		}
		if err != nil {
			if got, _ := checkfu.CodeOf(err); !errors.Is(werr, got) {
				t.Fatalf("Allow refused with %v; CanonicalRequest then Decide with %v", err, werr)
			}
			return
		}
		if got := a.Request(); !reflect.DeepEqual(got, want) {
			t.Fatalf("Allow holds %+v, want the canonical %+v", got, want)
		}
	})
}
