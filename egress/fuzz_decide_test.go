package egress_test

import (
	"net/http"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/egresstest"
)

// FuzzDecide: Decide never panics on a hand-built Request; its decision
// and error agree; it allows only a request that is canonical, and then
// exactly as the reference implementation does.
func FuzzDecide(f *testing.F) {
	rs, err := egress.ParseRules([]byte(`[
	 {"host":"api.example.com","port":443,"path_prefix":"/v1","methods":["GET","POST"],"headers":["Accept"]},
	 {"host":"*.cdn.example.org","port":443,"methods":["GET"]},
	 {"host":"xn--bcher-kva.example","port":8080,"methods":["PUT"],"headers":["X-Trace"]}]`))
	if err != nil {
		f.Fatal(err)
	}
	f.Add("https", "api.example.com", uint16(443), "/v1/x", "", "GET", "Accept")
	f.Add("https", "a.cdn.example.org", uint16(443), "/", "q=1", "GET", "")
	f.Add("https", "cdn.example.org", uint16(443), "/", "", "GET", "")
	f.Add("https", "evil@a.cdn.example.org", uint16(443), "/", "", "GET", "")
	f.Add("https", "api.example.com", uint16(443), "/v1/../admin", "", "GET", "")
	f.Add("https", "api.example.com", uint16(443), "/v10", "", "GET", "")
	f.Add("http", "xn--bcher-kva.example", uint16(8080), "/a", "", "PUT", "X-Trace")
	f.Add("https", "api.example.com", uint16(443), "/v1", "", "GET", "authorization")
	f.Add("https", "127.0.0.1", uint16(443), "/v1", "", "GET", "")
	f.Fuzz(func(t *testing.T, scheme, host string, port uint16, path, query, method, header string) {
		req := &egress.Request{Scheme: scheme, Host: host, Port: port, Path: path, RawQuery: query, Method: method, Header: http.Header{}}
		if header != "" {
			req.Header[header] = []string{"v"}
		}
		d, err := rs.Decide(req)
		if d.Allowed() != (err == nil) {
			t.Fatalf("Decide = %v with error %v", d, err)
		}
		if err != nil {
			if _, ok := checkfu.CodeOf(err); !ok {
				t.Fatalf("Decide error %v is not a refusal", err)
			}
			return
		}
		again, cerr := egress.CanonicalRequest(&http.Request{Method: req.Method, URL: req.URL(), Header: req.Header})
		if cerr != nil || again.Host != req.Host || again.Port != req.Port || again.Path != req.Path || again.Scheme != req.Scheme {
			t.Fatalf("Decide allowed a non-canonical request %+v (%+v, %v)", req, again, cerr)
		}
		if rule, _ := egresstest.Reference(rs, req); rule != d.Rule() {
			t.Fatalf("Decide allowed by rule %d, reference says %d", d.Rule(), rule)
		}
	})
}
