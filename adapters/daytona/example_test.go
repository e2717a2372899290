package daytona_test

import (
	"fmt"

	"github.com/checkfu/checkfu/adapters/daytona"
	"github.com/checkfu/checkfu/egress"
)

func ExampleMapPolicy() {
	for _, doc := range []string{`{"type":"none"}`, `{"type":"allowlist","allowed_hosts":["api.example.com"]}`} {
		p, _ := egress.ParseNetworkPolicy([]byte(doc))
		c, _ := p.Compile(nil)
		n, err := daytona.MapPolicy(c)
		fmt.Printf("%+v %v\n", n, err)
	}
	// Output:
	// {NetworkBlockAll:true NetworkAllowList: DomainAllowList:} <nil>
	// {NetworkBlockAll:false NetworkAllowList: DomainAllowList:} refused: allowlist_inexpressible: daytona: "api.example.com:443": Daytona's domain list carries no port and its CIDR list admits every port; an allowlist of 1 host:port entries cannot be written without widening it
}

func ExampleNew() {
	_, err := daytona.New(daytona.Config{Credential: "lease:daytona"})
	fmt.Println(err)
	// Output:
	// refused: config_invalid: daytona: a Config needs an Edge and a Credential handle
}

func ExampleCapability() {
	c := daytona.Capability()
	fmt.Println(c.EgressCertification, c.NetworkModes, daytona.Identity(), daytona.WorkerIdentity())
	// Output:
	// advisory_filter [none] checkfu:daytona-provider@1 checkfu:daytona-worker-provider@1
}
