package egress_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
)

func ExampleParseHostPort() {
	for _, s := range []string{"API.Example.com", "example.org:8443", "127.0.0.1", "*.example.com", "example.com:08443"} {
		hp, err := egress.ParseHostPort(s)
		if err != nil {
			code, _ := checkfu.CodeOf(err)
			fmt.Printf("%-18s refused: %s\n", s, code)
			continue
		}
		fmt.Printf("%-18s %v\n", s, hp)
	}
	// Output:
	// API.Example.com    api.example.com:443
	// example.org:8443   example.org:8443
	// 127.0.0.1          refused: policy_invalid
	// *.example.com      refused: policy_invalid
	// example.com:08443  refused: policy_invalid
}

func ExampleAllowlistNetwork() {
	api, _ := egress.ParseHostPort("api.example.com")
	p, err := egress.AllowlistNetwork(egress.Allowlist{
		AllowedHosts:                []egress.HostPort{api},
		RequiredEgressCertification: checkfu.RequireSecurityBoundary,
	})
	if err != nil {
		panic(err)
	}
	doc, _ := json.Marshal(p)
	fmt.Println(string(doc))

	// An allowlist that reaches nothing is refused, not taken as "none".
	_, err = egress.AllowlistNetwork(egress.Allowlist{AllowMCPServers: true})
	fmt.Println(errors.Is(err, egress.CodeAllowlistEmpty))
	// Output:
	// {"type":"allowlist","allowed_hosts":["api.example.com:443"],"required_egress_certification":"security_boundary"}
	// true
}

func ExampleNoNetwork() {
	c, err := egress.NoNetwork().Compile(nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Type(), c.AllowedHosts())
	err = c.Permits("api.example.com", 443)
	fmt.Println(errors.Is(err, egress.CodeEgressDisabled))

	// The zero NetworkPolicy is no member at all: it does not compile.
	_, err = egress.NetworkPolicy{}.Compile(nil)
	fmt.Println(errors.Is(err, egress.CodePolicyInvalid))
	// Output:
	// none []
	// true
	// true
}

func ExampleUnrestrictedNetwork() {
	p := egress.UnrestrictedNetwork()
	doc, _ := json.Marshal(p)
	fmt.Println(string(doc))
	c, _ := p.Compile(nil)
	// Any host by name; the Dialer still refuses every non-public address.
	fmt.Println(c.Permits("anything.example", 8080))
	// Unrestricted cannot claim a certification: there is no such field.
	_, err := egress.ParseNetworkPolicy([]byte(`{"type":"unrestricted","required_egress_certification":"advisory_filter"}`))
	fmt.Println(errors.Is(err, egress.CodePolicyInvalid))
	// Output:
	// {"type":"unrestricted"}
	// <nil>
	// true
}

// allow_package_managers expands to the catalog's exact hosts, and the
// compiled policy records which catalog version produced them.
func ExampleDefaultPresetCatalog() {
	catalog := egress.DefaultPresetCatalog()
	ecosystems := map[string]bool{}
	for _, h := range catalog.Hosts() {
		ecosystems[h.Ecosystem] = true
	}
	fmt.Println(len(ecosystems) == len(egress.PresetEcosystems()))

	p, _ := egress.ParseNetworkPolicy([]byte(`{"type":"allowlist","allow_package_managers":true}`))
	c, _ := p.Compile(catalog)
	fmt.Println(c.PresetCatalogVersion() == catalog.Version(), len(c.AllowedHosts()) == len(catalog.Hosts()))
	// Output:
	// true
	// true true
}

// Guard.ServeHTTP is the proxy handler; a refusal answers 403 naming its
// code in the Checkfu-Refusal header, before any DNS lookup.
func ExampleGuard_ServeHTTP() {
	policy, _ := egress.ParseNetworkPolicy([]byte(`{"type":"allowlist","allowed_hosts":["api.example.com"]}`))
	compiled, _ := policy.Compile(nil)
	ln := newLoopbackListener()
	g, err := egress.NewGuard(egress.GuardConfig{
		Policy:   compiled,
		Listener: ln,
		Logger:   slog.New(slog.DiscardHandler), // one line per refusal otherwise
	})
	if err != nil {
		panic(err)
	}
	defer ln.Close()

	// An absolute-form request, as a workload sends through HTTP_PROXY.
	req := httptest.NewRequest("GET", "http://metadata.example/latest/", nil)
	rec := httptest.NewRecorder()
	g.ServeHTTP(rec, req)
	fmt.Println(rec.Code, rec.Header().Get(egress.RefusalHeader))

	req = httptest.NewRequest("CONNECT", "evil.example:443", nil)
	rec = httptest.NewRecorder()
	g.ServeHTTP(rec, req)
	fmt.Println(rec.Code, rec.Header().Get(egress.RefusalHeader))
	fmt.Println(http.StatusText(rec.Code))
	// Output:
	// 403 host_not_allowed
	// 403 host_not_allowed
	// Forbidden
}
