package egress_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
)

func ExampleIsPublic() {
	for _, s := range []string{"8.8.8.8", "10.0.0.1", "169.254.169.254", "::ffff:127.0.0.1", "64:ff9b::808:808", "2606:4700:4700::1111"} {
		fmt.Println(s, egress.IsPublic(netip.MustParseAddr(s)))
	}
	// Output:
	// 8.8.8.8 true
	// 10.0.0.1 false
	// 169.254.169.254 false
	// ::ffff:127.0.0.1 false
	// 64:ff9b::808:808 false
	// 2606:4700:4700::1111 true
}

func ExampleParseNetworkPolicy() {
	p, err := egress.ParseNetworkPolicy([]byte(`{"type":"allowlist","allowed_hosts":["API.example.com","example.org:8443"],"required_egress_certification":"security_boundary"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	a, _ := p.Allowlist()
	fmt.Println(p.Type(), a.AllowedHosts, a.RequiredEgressCertification)

	_, err = egress.ParseNetworkPolicy([]byte(`{"type":"unrestricted","required_egress_certification":"security_boundary"}`))
	fmt.Println(err)
	_, err = egress.ParseNetworkPolicy([]byte(`{"type":"allowlist","allow_mcp_servers":true}`))
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	// Output:
	// allowlist [api.example.com:443 example.org:8443] security_boundary
	// refused: policy_invalid: egress: field "required_egress_certification" is not part of a "unrestricted" policy
	// allowlist_empty
}

func ExampleNetworkPolicy_Compile() {
	p, _ := egress.ParseNetworkPolicy([]byte(`{"type":"allowlist","allowed_hosts":["api.example.com"],"allow_package_managers":true}`))
	c, err := p.Compile(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.PresetCatalogVersion() == egress.DefaultPresetCatalog().Version())
	fmt.Println(c.Permits("api.example.com", 443))
	fmt.Println(c.Permits("api.example.com", 80))
	// Output:
	// true
	// <nil>
	// refused: host_not_allowed: egress: api.example.com:80 is not in the allowlist
}

func ExampleNewDialer() {
	// Only loopback and benchmarking blocks can be declared public, and
	// only for tests.
	_, err := egress.NewDialer(egress.DialerConfig{TreatAsPublicForTesting: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	// Output:
	// config_invalid
}

func ExampleClient_Do() {
	rules, _ := egress.ParseRules([]byte(`[{"host":"api.example.com","port":443,"path_prefix":"/v1","methods":["GET"],"headers":["Accept"]}]`))
	client, _ := egress.NewClient(egress.ClientConfig{Rules: rules})

	// A request no rule allows is refused before any DNS lookup, and the
	// credential hook never runs.
	req, _ := http.NewRequest("GET", "https://api.example.com/admin", nil)
	_, err := client.Do(req, func(h http.Header) error { h.Set("Authorization", "Bearer from-custody"); return nil })
	fmt.Println(err)
	// Output:
	// refused: no_rule_matched: egress: no rule matches GET api.example.com:443
}

func ExampleNewGuard() {
	policy, _ := egress.ParseNetworkPolicy([]byte(`{"type":"allowlist","allowed_hosts":["api.example.com"]}`))
	compiled, _ := policy.Compile(nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := egress.NewGuard(egress.GuardConfig{Policy: compiled, Listener: ln})
	if err != nil {
		fmt.Println(err)
		return
	}
	go g.Serve()
	// Point the workload's HTTP_PROXY and HTTPS_PROXY at g.Addr() ...
	g.Shutdown(context.Background())
}
