package egress_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
)

func TestParseNetworkPolicyAccepts(t *testing.T) {
	tests := []struct {
		doc  string
		want string // canonical document
	}{
		{`{"type":"none"}`, `{"type":"none"}`},
		{`{"type":"unrestricted"}`, `{"type":"unrestricted"}`},
		{`{"type":"allowlist","allowed_hosts":["API.Example.com","example.org:8443","bücher.example."]}`,
			`{"type":"allowlist","allowed_hosts":["api.example.com:443","example.org:8443","xn--bcher-kva.example:443"]}`},
		{`{"type":"allowlist","allow_package_managers":true,"allow_mcp_servers":true,"required_egress_certification":"security_boundary"}`,
			`{"type":"allowlist","allow_package_managers":true,"allow_mcp_servers":true,"required_egress_certification":"security_boundary"}`},
		{`{"type":"allowlist","allowed_hosts":["a.example.com"],"allow_package_managers":false,"required_egress_certification":"advisory_filter"}`,
			`{"type":"allowlist","allowed_hosts":["a.example.com:443"],"required_egress_certification":"advisory_filter"}`},
	}
	for _, tt := range tests {
		p, err := egress.ParseNetworkPolicy([]byte(tt.doc))
		if err != nil {
			t.Errorf("ParseNetworkPolicy(%s) = %v", tt.doc, err)
			continue
		}
		got, err := json.Marshal(p)
		if err != nil || string(got) != tt.want {
			t.Errorf("ParseNetworkPolicy(%s) marshals to %s, %v; want %s", tt.doc, got, err, tt.want)
			continue
		}
		again, err := egress.ParseNetworkPolicy(got)
		if err != nil {
			t.Errorf("re-parse %s: %v", got, err)
		}
		if again2, _ := json.Marshal(again); string(again2) != string(got) {
			t.Errorf("round trip %s -> %s", got, again2)
		}
	}
}

func TestParseNetworkPolicyRefuses(t *testing.T) {
	tests := []struct {
		doc  string
		code checkfu.Code
	}{
		{``, egress.CodePolicyInvalid},
		{`null`, egress.CodePolicyInvalid},
		{`[]`, egress.CodePolicyInvalid},
		{`{}`, egress.CodePolicyInvalid},
		{`{"type":"open"}`, egress.CodePolicyInvalid},
		{`{"type":"None"}`, egress.CodePolicyInvalid},
		{`{"Type":"none"}`, egress.CodePolicyInvalid},
		{`{"type":"none","type":"unrestricted"}`, egress.CodePolicyInvalid},
		{`{"type":"none"} {}`, egress.CodePolicyInvalid},
		{`{"type":"none"}x`, egress.CodePolicyInvalid},
		{"{\"type\":\"none\xff\"}", egress.CodePolicyInvalid},
		{`{"type":"none\ud800"}`, egress.CodePolicyInvalid},
		{`{"type":"allowlist","allowed_hosts":[["a.example.com","a.example.com"]]}`, egress.CodePolicyInvalid},
		{`{"type":"allowlist","allow_package_managers":true,"allowed_hosts":[` + strings.Repeat("[", 20) + strings.Repeat("]", 20) + `]}`, egress.CodePolicyInvalid},
		{`{"type":"none"}` + strings.Repeat(" ", 64<<10), egress.CodePolicyInvalid},
		{`{"type":"allowlist","allow_package_managers":true,"x":{"a":1,"a":2}}`, egress.CodePolicyInvalid},
		{`{"type":"none","extra":1}`, egress.CodePolicyInvalid},
		{`{"type":"none","required_egress_certification":"security_boundary"}`, egress.CodePolicyInvalid},
		{`{"type":"unrestricted","required_egress_certification":"advisory_filter"}`, egress.CodePolicyInvalid},
		{`{"type":"unrestricted","allowed_hosts":["a.example.com"]}`, egress.CodePolicyInvalid},
		{`{"type":"allowlist","allowed_hosts":["a.example.com"],"required_egress_certification":"unsupported"}`, egress.CodePolicyInvalid},
		{`{"type":"allowlist","allowed_hosts":["a.example.com"],"required_egress_certification":""}`, egress.CodePolicyInvalid},
		{`{"type":"allowlist","allowed_hosts":["a.example.com"],"required_egress_certification":null}`, egress.CodePolicyInvalid},
		{`{"type":"allowlist","allowed_hosts":null,"allow_package_managers":true}`, egress.CodePolicyInvalid},
		{`{"type":"allowlist","allowed_hosts":["a.example.com"],"allow_package_managers":"true"}`, egress.CodePolicyInvalid},
		{`{"type":"allowlist","allowed_hosts":["a.example.com","A.example.com:443"]}`, egress.CodePolicyInvalid},
		{`{"type":"allowlist","allowed_hosts":["127.0.0.1"]}`, egress.CodePolicyInvalid},
		{`{"type":"allowlist","allowed_hosts":["[::1]:443"]}`, egress.CodePolicyInvalid},
		{`{"type":"allowlist","allowed_hosts":["127.1"]}`, egress.CodePolicyInvalid},
		{`{"type":"allowlist","allowed_hosts":["*.example.com"]}`, egress.CodePolicyInvalid},
		{`{"type":"allowlist","allowed_hosts":["a.example.com:0443"]}`, egress.CodePolicyInvalid},
		{`{"type":"allowlist","allowed_hosts":["a.example.com:0"]}`, egress.CodePolicyInvalid},
		{`{"type":"allowlist","allowed_hosts":["a.example.com:65536"]}`, egress.CodePolicyInvalid},
		{`{"type":"allowlist","allowed_hosts":["a.example.com:"]}`, egress.CodePolicyInvalid},
		{`{"type":"allowlist","allowed_hosts":["user@a.example.com"]}`, egress.CodePolicyInvalid},
		{`{"type":"allowlist","allowed_hosts":["a.example.com/path"]}`, egress.CodePolicyInvalid},
		{`{"type":"allowlist","allowed_hosts":[""]}`, egress.CodePolicyInvalid},
		{`{"type":"allowlist"}`, egress.CodeAllowlistEmpty},
		{`{"type":"allowlist","allowed_hosts":[]}`, egress.CodeAllowlistEmpty},
		{`{"type":"allowlist","allow_mcp_servers":true}`, egress.CodeAllowlistEmpty},
		{`{"type":"allowlist","allow_mcp_servers":true,"allow_package_managers":false,"required_egress_certification":"security_boundary"}`, egress.CodeAllowlistEmpty},
	}
	for _, tt := range tests {
		_, err := egress.ParseNetworkPolicy([]byte(tt.doc))
		if !errors.Is(err, tt.code) {
			t.Errorf("ParseNetworkPolicy(%s) = %v, want %s", tt.doc, err, tt.code)
		}
	}
}

// TestCompileExpandsPresets checks that allow_package_managers becomes
// exact catalog hosts with the catalog version recorded, that
// allow_mcp_servers adds nothing, and that enforcement sees exact hosts.
func TestCompileExpandsPresets(t *testing.T) {
	p, err := egress.ParseNetworkPolicy([]byte(`{"type":"allowlist","allowed_hosts":["api.example.com"],"allow_package_managers":true,"allow_mcp_servers":true}`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	cat := egress.DefaultPresetCatalog()
	if c.PresetCatalogVersion() != cat.Version() {
		t.Errorf("PresetCatalogVersion = %q, want %q", c.PresetCatalogVersion(), cat.Version())
	}
	hosts := c.AllowedHosts()
	if want := len(cat.Hosts()) + 1; len(hosts) != want {
		t.Errorf("compiled %d hosts, want %d (catalog + 1)", len(hosts), want)
	}
	for _, h := range cat.Hosts() {
		if err := c.Permits(h.Host, h.Port); err != nil {
			t.Errorf("Permits(%s) = %v", h, err)
		}
	}
	if err := c.Permits("api.example.com", 443); err != nil {
		t.Errorf("Permits(api.example.com:443) = %v", err)
	}
	for _, hp := range []struct {
		host string
		port uint16
	}{{"api.example.com", 80}, {"evil.example.com", 443}, {"example.com", 443}, {"8.8.8.8", 443}} {
		err := c.Permits(hp.host, hp.port)
		if !errors.Is(err, egress.CodeHostNotAllowed) {
			t.Errorf("Permits(%s:%d) = %v, want %s", hp.host, hp.port, err, egress.CodeHostNotAllowed)
		}
	}
	doc, _ := json.Marshal(c)
	if !strings.Contains(string(doc), `"preset_catalog_version":"`+cat.Version()+`"`) {
		t.Errorf("compiled document %s does not record the catalog version", doc)
	}

	// allow_mcp_servers alone never compiles to a host; a policy without
	// allow_package_managers records no catalog.
	p2, _ := egress.ParseNetworkPolicy([]byte(`{"type":"allowlist","allowed_hosts":["api.example.com:8443"],"allow_mcp_servers":true}`))
	c2, err := p2.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c2.AllowedHosts(); !slices.Equal(got, []egress.HostPort{{Host: "api.example.com", Port: 8443}}) || c2.PresetCatalogVersion() != "" {
		t.Errorf("allow_mcp_servers compiled to %v, catalog %q", got, c2.PresetCatalogVersion())
	}
}

func TestCompiledPolicyMembers(t *testing.T) {
	none, _ := egress.NoNetwork().Compile(nil)
	unr, _ := egress.UnrestrictedNetwork().Compile(nil)
	var zero egress.CompiledPolicy
	for _, host := range []string{"api.example.com", "8.8.8.8"} {
		if err := none.Permits(host, 443); !errors.Is(err, egress.CodeEgressDisabled) {
			t.Errorf("none.Permits(%s) = %v", host, err)
		}
		if err := zero.Permits(host, 443); !errors.Is(err, egress.CodeEgressDisabled) {
			t.Errorf("zero.Permits(%s) = %v", host, err)
		}
		if err := unr.Permits(host, 443); err != nil {
			t.Errorf("unrestricted.Permits(%s) = %v", host, err)
		}
	}
	var zp egress.NetworkPolicy
	if _, err := zp.Compile(nil); !errors.Is(err, egress.CodePolicyInvalid) {
		t.Errorf("zero policy Compile = %v", err)
	}
	if _, err := json.Marshal(zp); err == nil {
		t.Errorf("zero policy marshals")
	}
}

func FuzzParseNetworkPolicy(f *testing.F) {
	for _, s := range []string{
		`{"type":"none"}`, `{"type":"unrestricted"}`,
		`{"type":"allowlist","allowed_hosts":["a.example.com","b.example.com:80"],"allow_package_managers":true,"allow_mcp_servers":true,"required_egress_certification":"security_boundary"}`,
		`{"type":"allowlist","allow_mcp_servers":true}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		p, err := egress.ParseNetworkPolicy(doc)
		if err != nil {
			if _, ok := checkfu.CodeOf(err); !ok {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		out, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("marshal accepted policy: %v", err)
		}
		p2, err := egress.ParseNetworkPolicy(out)
		if err != nil {
			t.Fatalf("re-parse %s: %v", out, err)
		}
		out2, _ := json.Marshal(p2)
		if string(out) != string(out2) {
			t.Fatalf("not canonical: %s then %s", out, out2)
		}
	})
}

// TestAllowlistNetworkRefuses checks that a hand-built allowlist is held
// to the rules a document is: canonical hosts, no duplicates, a bound on
// their number, and something to reach.
func TestAllowlistNetworkRefuses(t *testing.T) {
	many := make([]egress.HostPort, 513)
	for i := range many {
		many[i] = egress.HostPort{Host: fmt.Sprintf("h%d.example.com", i), Port: 443}
	}
	tests := []struct {
		name  string
		hosts []egress.HostPort
		code  checkfu.Code
	}{
		{"upper case", []egress.HostPort{{Host: "A.example.com", Port: 443}}, egress.CodePolicyInvalid},
		{"trailing dot", []egress.HostPort{{Host: "a.example.com.", Port: 443}}, egress.CodePolicyInvalid},
		{"U-label", []egress.HostPort{{Host: "bücher.example", Port: 443}}, egress.CodePolicyInvalid},
		{"IP literal", []egress.HostPort{{Host: "127.0.0.1", Port: 443}}, egress.CodePolicyInvalid},
		{"port 0", []egress.HostPort{{Host: "a.example.com", Port: 0}}, egress.CodePolicyInvalid},
		{"duplicate", []egress.HostPort{{Host: "a.example.com", Port: 443}, {Host: "a.example.com", Port: 443}}, egress.CodePolicyInvalid},
		{"too many", many, egress.CodePolicyInvalid},
		{"empty", nil, egress.CodeAllowlistEmpty},
	}
	for _, tt := range tests {
		if _, err := egress.AllowlistNetwork(egress.Allowlist{AllowedHosts: tt.hosts}); !errors.Is(err, tt.code) {
			t.Errorf("%s: AllowlistNetwork = %v, want %s", tt.name, err, tt.code)
		}
	}
	if _, err := egress.AllowlistNetwork(egress.Allowlist{AllowedHosts: many[:512]}); err != nil {
		t.Errorf("512 hosts: %v", err)
	}
}
