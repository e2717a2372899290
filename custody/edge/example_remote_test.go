package edge_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
)

// Edge.Remote hands the gateway's MCP client a transport for one
// authorized remote tool call; a registration that is not a remote MCP
// tool gets none (the gateway sends it with Edge.Send). The whole remote
// path runs in package gateway's ExampleGateway_remote.
func ExampleEdge_Remote() {
	rig := newEdgeRig(&testing.T{})
	action, err := rig.registry.Resolve(rig.list().Call, rig.conn.Credential)
	if err != nil {
		panic(err)
	}
	_, err = rig.edge.Remote(context.Background(), edge.Outbound{Connection: rig.conn, Action: action, Lease: rig.lease.ID, Scope: govScope})
	fmt.Println(errors.Is(err, authz.CodeCapabilityMismatch))
	// Output:
	// true
}
