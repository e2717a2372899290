package vercel_test

import (
	"fmt"

	"github.com/checkfu/checkfu/adapters/vercel"
	"github.com/checkfu/checkfu/egress"
)

func ExampleMapPolicy() {
	p, _ := egress.ParseNetworkPolicy([]byte(`{"type":"unrestricted"}`))
	c, _ := p.Compile(nil)
	n, err := vercel.MapPolicy(c)
	fmt.Println(n.AllowSubnets, n.DenySubnets[:3], err)
	// Output:
	// [0.0.0.0/0 2000::/3] [0.0.0.0/8 10.0.0.0/8 100.64.0.0/10] <nil>
}

func ExampleNew() {
	_, err := vercel.New(vercel.Config{Credential: "lease:vercel"})
	fmt.Println(err)
	// Output:
	// refused: config_invalid: vercel: a Config needs an Edge, a Credential handle, a TeamID and a ProjectID
}

func ExampleCapability() {
	c := vercel.Capability()
	fmt.Println(c.EgressCertification, c.NetworkModes, vercel.Identity(), vercel.WorkerIdentity())
	// Output:
	// advisory_filter [none unrestricted] checkfu:vercel-provider@1 checkfu:vercel-worker-provider@1
}
