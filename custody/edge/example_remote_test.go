package edge_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
)

// Edge.Remote hands the pipeline's MCP client a transport for one
// authorized remote tool call; a value the pipeline did not make gets
// none. The whole remote path runs in package gateway's
// ExampleGateway_remote.
func ExampleEdge_Remote() {
	catalog, _ := authz.NewCatalog()
	registry, _ := authz.NewRegistry()
	leases, _ := authz.NewLeases(authz.LeaseConfig{Catalog: catalog, Registry: registry})
	e, err := edge.NewEdge(edge.EdgeConfig{
		Leases:    leases,
		Custodian: custody.NewNative(custody.GenerateKeyset(), custody.NewMemoryStore()),
	})
	if err != nil {
		panic(err)
	}
	defer e.CloseIdleConnections()

	_, err = e.Remote(context.Background(), edge.Authorized{})
	fmt.Println(errors.Is(err, edge.CodeNotAuthorized))
	// Output:
	// true
}
