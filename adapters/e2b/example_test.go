package e2b_test

import (
	"fmt"

	"github.com/checkfu/checkfu/adapters/e2b"
	"github.com/checkfu/checkfu/egress"
)

func ExampleMapPolicy() {
	p, _ := egress.ParseNetworkPolicy([]byte(`{"type":"allowlist","allowed_hosts":["api.example.com"]}`))
	c, _ := p.Compile(nil)
	n, err := e2b.MapPolicy(c, []egress.HostPort{{Host: "gateway.example", Port: 443}})
	fmt.Println(n.AllowInternetAccess, n.AllowOut, err)
	fmt.Println(n.Caveats[0])

	p, _ = egress.ParseNetworkPolicy([]byte(`{"type":"allowlist","allowed_hosts":["db.example.com:5432"]}`))
	c, _ = p.Compile(nil)
	_, err = e2b.MapPolicy(c, nil)
	fmt.Println(err)
	// Output:
	// false [api.example.com gateway.example] <nil>
	// authority: workload and plane destinations share one allowOut list
	// refused: policy_inexpressible: e2b: "db.example.com": E2B filters by name on ports 80 and 443 only, not port 5432
}

func ExampleNew() {
	// The Config carries a handle, never the key; the Runner's Edge
	// resolves it for each request.
	_, err := e2b.New(e2b.Config{Credential: "lease:e2b", Template: "base"})
	fmt.Println(err)
	// Output:
	// refused: config_invalid: e2b: a Config needs an Edge, a Credential handle and a Template
}

func ExampleCapability() {
	c := e2b.Capability()
	fmt.Println(c.EgressCertification, c.NetworkModes, e2b.Identity(), e2b.WorkerIdentity())
	// Output:
	// advisory_filter [allowlist none unrestricted] checkfu:e2b-provider@1 checkfu:e2b-worker-provider@1
}
