package edge_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
)

// Only the call pipeline (package custody/pipeline) makes an
// edge.Authorized, after every check; the edge refuses anything else, the
// zero value included, before it opens the credential. Example_pipeline
// shows a call that passes.
func ExampleEdge_Send() {
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

	_, err = e.Send(context.Background(), edge.Authorized{})
	fmt.Println(errors.Is(err, edge.CodeNotAuthorized))
	// Output:
	// true
}
