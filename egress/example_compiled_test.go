package egress_test

import (
	"encoding/json"
	"fmt"

	"github.com/checkfu/checkfu/egress"
)

// A compiled policy marshals every exact host it grants and the catalog
// version that produced them, so nothing it allows is invisible.
func ExampleCompiledPolicy_MarshalJSON() {
	p, _ := egress.ParseNetworkPolicy([]byte(`{"type":"allowlist","allowed_hosts":["api.example.com","api.example.com:8443"],"allow_mcp_servers":true}`))
	c, err := p.Compile(nil)
	if err != nil {
		panic(err)
	}
	b, _ := json.Marshal(c)
	fmt.Println(string(b))
	fmt.Println(c.RequiredEgressCertification().Min())
	// Output:
	// {"type":"allowlist","allowed_hosts":["api.example.com:443","api.example.com:8443"]}
	// advisory_filter
}
