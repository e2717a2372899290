package edge_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/checkfu/checkfu/custody/edge"
)

// Edge.Remote hands the pipeline's MCP client a transport for one
// authorized remote tool call; a value the pipeline did not make gets
// none. The whole remote path runs in package gateway's
// ExampleGateway_remote.
func ExampleEdge_Remote() {
	rig := newEdgeRig(&testing.T{})
	_, err := rig.edge.Remote(context.Background(), edge.Authorized{})
	fmt.Println(errors.Is(err, edge.CodeNotAuthorized))
	// Output:
	// true
}
