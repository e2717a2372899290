package egress_test

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
)

func ExampleParseRules() {
	rs, err := egress.ParseRules([]byte(`[
	  {"host": "API.Example.com.", "port": 443, "path_prefix": "/v1",
	   "methods": ["post", "GET"], "headers": ["content-type"]},
	  {"host": "*.cdn.example.org", "port": 443, "methods": ["GET"]}
	]`))
	if err != nil {
		fmt.Println(err)
		return
	}
	canonical, _ := json.Marshal(rs)
	fmt.Println(string(canonical))

	_, err = egress.ParseRules([]byte(`[{"host": "*.co.uk", "port": 443, "methods": ["GET"]}]`))
	fmt.Println(err)
	_, err = egress.ParseRules([]byte(`[{"host": "api.example.com", "port": 443, "methods": ["GET"], "headers": ["Authorization"]}]`))
	fmt.Println(err)
	// Output:
	// [{"host":"api.example.com","port":443,"path_prefix":"/v1","methods":["GET","POST"],"headers":["Content-Type"]},{"host":"*.cdn.example.org","port":443,"path_prefix":"/","methods":["GET"],"headers":[]}]
	// refused: rules_invalid: egress: rule 0: host "*.co.uk": a wildcard under the public suffix "co.uk" would match other owners' names; list the hosts instead
	// refused: rules_invalid: egress: rule 0: header "Authorization" is on the fixed denylist and cannot be allowed
}

func ExampleRules_Decide() {
	rs, err := egress.ParseRules([]byte(`[
	  {"host": "api.example.com", "port": 443, "path_prefix": "/v1", "methods": ["GET"], "headers": ["Accept"]}
	]`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, tc := range []struct{ url, header string }{
		{"https://api.example.com/v1/users", "Accept"},
		{"https://api.example.com/v10", ""},
		{"https://api.example.com/v1/users", "X-Debug"},
		{"https://api.example.com/v1/users", "Authorization"},
	} {
		hr, _ := http.NewRequest("GET", tc.url, nil)
		if tc.header != "" {
			hr.Header.Set(tc.header, "x")
		}
		req, err := egress.CanonicalRequest(hr)
		if err != nil {
			fmt.Println(err)
			continue
		}
		d, err := rs.Decide(&req)
		if code, ok := checkfu.CodeOf(err); ok {
			fmt.Println(d, code)
			continue
		}
		fmt.Println(d)
	}
	// Output:
	// allow(rule 0)
	// deny no_rule_matched
	// deny header_not_allowed
	// deny header_denied
}

func ExampleCanonicalHost() {
	for _, s := range []string{"API.Example.COM.", "bücher.example", "ｅｘａｍｐｌｅ.com", "①②⑦.0.0.1", "127.1"} {
		h, err := egress.CanonicalHost(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(h)
	}
	// Output:
	// api.example.com
	// xn--bcher-kva.example
	// example.com
	// refused: host_invalid: egress: host "①②⑦.0.0.1" is (or IDNA maps it to) an IP literal, not a DNS name
	// refused: host_invalid: egress: host "127.1" ends in a numeric label, which resolvers read as an IPv4 address
}

func ExampleCanonicalRequest() {
	hr, _ := http.NewRequest("GET", "https://API.example.com.:443/v1/a%20b?q=1", nil)
	req, err := egress.CanonicalRequest(hr)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(req.Host, req.Port, req.Path, req.Authority(), req.URL())

	hr, _ = http.NewRequest("GET", "https://example.com/v1/%2E%2E/admin", nil)
	_, err = egress.CanonicalRequest(hr)
	fmt.Println(err)
	// Output:
	// api.example.com 443 /v1/a%20b api.example.com:443 https://api.example.com/v1/a%20b?q=1
	// refused: request_invalid: egress: path percent-encodes an unreserved character; write it literally
}

func ExampleHeaderDenied() {
	for _, h := range []string{"Accept", "authorization", "X-Forwarded-For", "X_Forwarded_For", "Metadata-Flavor"} {
		fmt.Println(h, egress.HeaderDenied(h))
	}
	// Output:
	// Accept false
	// authorization true
	// X-Forwarded-For true
	// X_Forwarded_For true
	// Metadata-Flavor true
}

func ExampleNewRules() {
	rs, err := egress.NewRules([]egress.Rule{
		{Host: "*.Example.org.", Port: 443, Methods: []string{"get"}},
		{Host: "api.example.com", Port: 8443, PathPrefix: "/v2", Methods: []string{"POST"}, Headers: []string{"content-type"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := 0; i < rs.Len(); i++ {
		fmt.Printf("%+v\n", rs.Rule(i))
	}
	_, err = egress.NewRules(nil)
	fmt.Println(err)
	// Output:
	// {Host:*.example.org Port:443 PathPrefix:/ Methods:[GET] Headers:[]}
	// {Host:api.example.com Port:8443 PathPrefix:/v2 Methods:[POST] Headers:[Content-Type]}
	// refused: rules_invalid: egress: no rules (a Connection needs 1 to 32)
}
