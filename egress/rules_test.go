package egress

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseRulesCanonicalises(t *testing.T) {
	rs := mustRules(t, `[{"host":"API.Bücher.example.","port":443,"path_prefix":"/v1/a%20b","methods":["post","GET"],"headers":["content-type","accept"]},
		{"host":"*.Example.ORG","port":8080,"methods":["get"]}]`)
	got, err := json.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"host":"api.xn--bcher-kva.example","port":443,"path_prefix":"/v1/a%20b","methods":["GET","POST"],"headers":["Accept","Content-Type"]},` +
		`{"host":"*.example.org","port":8080,"path_prefix":"/","methods":["GET"],"headers":[]}]`
	if string(got) != want {
		t.Errorf("MarshalJSON = %s\nwant %s", got, want)
	}
	again := mustRules(t, string(got))
	if !again.Equal(rs) {
		t.Errorf("ParseRules(MarshalJSON(rs)) != rs")
	}
	if rs.Len() != 2 {
		t.Errorf("Len() = %d", rs.Len())
	}
	r := rs.Rule(0)
	r.Methods[0] = "DELETE"
	if rs.Rule(0).Methods[0] != "GET" {
		t.Error("Rule(i) aliases the Rules' internal slices")
	}
}

func TestParseRulesRefuses(t *testing.T) {
	rule := func(fields string) string {
		return `[{"host":"api.example.com","port":443,"methods":["GET"]` + fields + `}]`
	}
	tests := []struct {
		name, doc, msg string
	}{
		{"empty", ``, "rules document: json: unexpected end of JSON"},
		{"not json", `[{]`, ""},
		{"null", `null`, "does not match the schema"},
		{"object", `{"rules":[]}`, "does not match the schema"},
		{"zero rules", `[]`, "does not match the schema"},
		{"33 rules", "[" + strings.Repeat(`{"host":"a.example.com","port":1,"methods":["GET"]},`, 32) + `{"host":"a.example.com","port":1,"methods":["GET"]}]`, "does not match the schema"},
		{"trailing data", rule(``) + `[]`, "data after the JSON value"},
		{"trailing garbage", rule(``) + `x`, ""},
		{"duplicate key", `[{"host":"a.example.com","host":"evil.com","port":443,"methods":["GET"]}]`, `member "host" appears twice`},
		{"unknown field", rule(`,"hosts":["x"]`), "does not match the schema"},
		{"case-folded field", `[{"HOST":"api.example.com","port":443,"methods":["GET"]}]`, "does not match the schema"},
		{"missing port", `[{"host":"api.example.com","methods":["GET"]}]`, "does not match the schema"},
		{"port 0", `[{"host":"api.example.com","port":0,"methods":["GET"]}]`, "does not match the schema"},
		{"port 65536", `[{"host":"api.example.com","port":65536,"methods":["GET"]}]`, "does not match the schema"},
		{"port string", `[{"host":"api.example.com","port":"443","methods":["GET"]}]`, "does not match the schema"},
		{"port float", `[{"host":"api.example.com","port":443.5,"methods":["GET"]}]`, "does not match the schema"},
		{"no methods", `[{"host":"api.example.com","port":443,"methods":[]}]`, "does not match the schema"},
		{"invalid utf8", "[{\"host\":\"a\xff.com\",\"port\":443,\"methods\":[\"GET\"]}]", "invalid UTF-8"},
		{"ip host", `[{"host":"127.0.0.1","port":443,"methods":["GET"]}]`, "IP literal"},
		{"ipv6 host", `[{"host":"[::1]","port":443,"methods":["GET"]}]`, "IP literal"},
		{"idna ip host", `[{"host":"①②⑦.0.0.1","port":443,"methods":["GET"]}]`, "IP literal"},
		{"numeric host", `[{"host":"127.1","port":443,"methods":["GET"]}]`, "numeric label"},
		{"two trailing dots", `[{"host":"example.com..","port":443,"methods":["GET"]}]`, "empty label"},
		{"star", `[{"host":"*","port":443,"methods":["GET"]}]`, "wildcard"},
		{"*.com", `[{"host":"*.com","port":443,"methods":["GET"]}]`, `public suffix "com"`},
		{"*.co.uk", `[{"host":"*.co.uk","port":443,"methods":["GET"]}]`, `public suffix "co.uk"`},
		{"*.github.io", `[{"host":"*.github.io","port":443,"methods":["GET"]}]`, `public suffix "github.io"`},
		{"*.COM.", `[{"host":"*.COM.","port":443,"methods":["GET"]}]`, `public suffix "com"`},
		{"*.internal", `[{"host":"*.internal","port":443,"methods":["GET"]}]`, `public suffix "internal"`},
		{"inner wildcard", `[{"host":"a.*.example.com","port":443,"methods":["GET"]}]`, "wildcard"},
		{"double wildcard", `[{"host":"*.*.example.com","port":443,"methods":["GET"]}]`, "wildcard"},
		{"partial wildcard", `[{"host":"a*.example.com","port":443,"methods":["GET"]}]`, "wildcard"},
		{"path relative", rule(`,"path_prefix":"v1"`), "does not match the schema"},
		{"path trailing slash", rule(`,"path_prefix":"/v1/"`), `ends in "/"; write "/v1"`},
		{"path dot", rule(`,"path_prefix":"/v1/.."`), "dot segment"},
		{"path encoded slash", rule(`,"path_prefix":"/v1%2Fx"`), "encoded slash"},
		{"path encoded letter", rule(`,"path_prefix":"/%761"`), "unreserved"},
		{"method connect", `[{"host":"api.example.com","port":443,"methods":["connect"]}]`, `method "CONNECT" is never allowed`},
		{"method trace", `[{"host":"api.example.com","port":443,"methods":["TRACE"]}]`, `method "TRACE" is never allowed`},
		{"method dup", `[{"host":"api.example.com","port":443,"methods":["GET","get"]}]`, ""},
		{"method bad", `[{"host":"api.example.com","port":443,"methods":["G T"]}]`, "does not match the schema"},
		{"header Authorization", rule(`,"headers":["Authorization"]`), `header "Authorization" is on the fixed denylist`},
		{"header x-forwarded-for", rule(`,"headers":["x-forwarded-for"]`), `header "x-forwarded-for" is on the fixed denylist`},
		{"header X_Api", rule(`,"headers":["X_Api"]`), `header "X_Api" is on the fixed denylist`},
		{"header host", rule(`,"headers":["HOST"]`), "fixed denylist"},
		{"header metadata token", rule(`,"headers":["X-aws-ec2-metadata-token-ttl-seconds"]`), "fixed denylist"},
		{"header dup", rule(`,"headers":["Accept","accept"]`), `header "Accept" is listed twice`},
		{"header bad", rule(`,"headers":["A:B"]`), "does not match the schema"},
		{"too deep", "[" + strings.Repeat("[", 20) + strings.Repeat("]", 20) + "]", "json: "},
		{"too large", "[" + strings.Repeat(" ", 256<<10) + "]", "json: "},
		{"unpaired surrogate", `[{"host":"a\ud800.example.com","port":443,"methods":["GET"]}]`, "json: "},
		{"duplicate rule", `[{"host":"a.example.com","port":443,"methods":["GET"]},{"host":"A.example.com.","port":443,"path_prefix":"/","methods":["get"],"headers":[]}]`, "rule 1 duplicates rule 0"},
	}
	for _, tt := range tests {
		rs, err := ParseRules([]byte(tt.doc))
		if err == nil {
			t.Errorf("%s: ParseRules(%s) = %d rules, want rules_invalid", tt.name, tt.doc, rs.Len())
			continue
		}
		if !errors.Is(err, CodeRulesInvalid) {
			t.Errorf("%s: ParseRules error = %v, want code rules_invalid", tt.name, err)
		}
		if !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: ParseRules error = %q, want it to contain %q", tt.name, err, tt.msg)
		}
	}
}

func TestParseRulesErrorText(t *testing.T) {
	tests := []struct{ doc, want string }{
		{`[{"host":"*.com","port":443,"methods":["GET"]}]`,
			`refused: rules_invalid: egress: rule 0: host "*.com": a wildcard under the public suffix "com" would match other owners' names; list the hosts instead`},
		{`[{"host":"a.example","port":443,"methods":["GET"]},{"host":"127.0.0.1","port":443,"methods":["GET"]}]`,
			`refused: rules_invalid: egress: rule 1: host "127.0.0.1" is (or IDNA maps it to) an IP literal, not a DNS name: host_invalid`},
		{`[{"host":"a.example","port":443,"methods":["GET"],"headers":["Cookie"]}]`,
			`refused: rules_invalid: egress: rule 0: header "Cookie" is on the fixed denylist and cannot be allowed`},
		{`[{"host":"a.example","port":443,"methods":["GET"],"x":1}]`,
			`refused: rules_invalid: egress: rules document does not match the schema: at /0: additionalProperties 'x' not allowed`},
	}
	for _, tt := range tests {
		_, err := ParseRules([]byte(tt.doc))
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParseRules(%s) error =\n%v\nwant\n%s", tt.doc, err, tt.want)
		}
	}
	_, err := ParseRules([]byte(`[{"host":"127.0.0.1","port":443,"methods":["GET"]}]`))
	if !errors.Is(err, CodeHostInvalid) {
		t.Errorf("host refusal in a rule does not wrap host_invalid: %v", err)
	}
}

func TestNewRulesLimits(t *testing.T) {
	r := Rule{Host: "a.example", Port: 443, Methods: []string{"GET"}}
	if _, err := NewRules(nil); !errors.Is(err, CodeRulesInvalid) {
		t.Errorf("NewRules(nil) error = %v", err)
	}
	var rules []Rule
	for i := range MaxRules {
		r.Port = uint16(i + 1)
		rules = append(rules, r)
	}
	if rs, err := NewRules(rules); err != nil || rs.Len() != MaxRules {
		t.Fatalf("NewRules(32 rules) = %v", err)
	}
	r.Port = 1000
	if _, err := NewRules(append(rules, r)); !errors.Is(err, CodeRulesInvalid) {
		t.Errorf("NewRules(33 rules) error = %v", err)
	}
	if _, err := NewRules([]Rule{{Host: "a.example", Methods: []string{"GET"}}}); err == nil || !strings.Contains(err.Error(), "port 0") {
		t.Errorf("NewRules(port 0) error = %v", err)
	}
	if _, err := NewRules([]Rule{{Host: "a.example", Port: 1}}); err == nil || !strings.Contains(err.Error(), "no methods") {
		t.Errorf("NewRules(no methods) error = %v", err)
	}
}

func TestRulesJSONField(t *testing.T) {
	var conn struct {
		Rules Rules `json:"egress_rules"`
	}
	if err := json.Unmarshal([]byte(`{"egress_rules":[{"host":"a.example","port":443,"methods":["GET"]}]}`), &conn); err != nil {
		t.Fatal(err)
	}
	if conn.Rules.Len() != 1 {
		t.Fatalf("Len = %d", conn.Rules.Len())
	}
	if err := json.Unmarshal([]byte(`{"egress_rules":[{"host":"*.com","port":443,"methods":["GET"]}]}`), &conn); !errors.Is(err, CodeRulesInvalid) {
		t.Errorf("Unmarshal of a bad rule = %v", err)
	}
	if b, _ := json.Marshal(&Rules{}); string(b) != "[]" {
		t.Errorf("zero Rules marshals to %s", b)
	}
	if !json.Valid(RulesSchema()) {
		t.Error("RulesSchema is not JSON")
	}
}

func TestNewRulesMethodsASCII(t *testing.T) {
	for _, m := range []string{"ſ", "gEt\u0130", "GET ", ""} {
		if _, err := NewRules([]Rule{{Host: "a.example", Port: 443, Methods: []string{m}}}); err == nil {
			t.Errorf("NewRules(method %q) accepted", m)
		}
	}
}

// TestSchemaAgreesWithLimits pins the schema's limits to the Go ones.
func TestSchemaAgreesWithLimits(t *testing.T) {
	var schema struct {
		MinItems int `json:"minItems"`
		MaxItems int `json:"maxItems"`
		Items    struct {
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"items"`
	}
	if err := json.Unmarshal(RulesSchema(), &schema); err != nil {
		t.Fatal(err)
	}
	if schema.MinItems != 1 || schema.MaxItems != MaxRules {
		t.Errorf("schema allows %d to %d rules, want 1 to %d", schema.MinItems, schema.MaxItems, MaxRules)
	}
	want := map[string]bool{"host": true, "port": true, "path_prefix": true, "methods": true, "headers": true}
	for name := range schema.Items.Properties {
		if !want[name] {
			t.Errorf("schema property %q is not a Rule field", name)
		}
		delete(want, name)
	}
	for name := range want {
		t.Errorf("Rule field %q missing from the schema", name)
	}
}
