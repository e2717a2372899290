package edge_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/checkfu/checkfu/custody/edge"
)

// Only the call pipeline (package custody/pipeline) makes an
// edge.Authorized, after every check; the edge refuses anything else, the
// zero value included, before it opens the credential.
func ExampleEdge_Send() {
	rig := newEdgeRig(&testing.T{})
	resp, err := rig.call(context.Background(), rig.list()) // through a pipeline
	fmt.Println(resp.Status, string(resp.Body), err)

	_, err = rig.edge.Send(context.Background(), edge.Authorized{})
	fmt.Println(errors.Is(err, edge.CodeNotAuthorized), rig.custodian.opens.Load())
	// Output:
	// 200 {"ok":true} <nil>
	// true 1
}
