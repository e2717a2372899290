package edge_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
)

// The gateway authorizes a call itself (permission, registration,
// arguments, lease) and hands the edge only what needs the credential.
func ExampleEdge_Send() {
	rig := newEdgeRig(&testing.T{})
	call := rig.list().Call
	action, err := rig.registry.Resolve(call, rig.conn.Credential) // the gateway uses Match then Arguments
	if err != nil {
		panic(err)
	}
	lease, err := rig.leases.Use(rig.lease.ID, authz.LeaseUse{Scope: govScope, Capability: action.Capability})
	if err != nil {
		panic(err)
	}
	resp, err := rig.edge.Send(context.Background(), edge.Outbound{Connection: rig.conn, Action: action, Lease: lease.ID, Scope: govScope})
	fmt.Println(resp.Status, string(resp.Body), err)

	action.Resource += "/elsewhere" // not the registration
	_, err = rig.edge.Send(context.Background(), edge.Outbound{Connection: rig.conn, Action: action, Lease: lease.ID, Scope: govScope})
	fmt.Println(errors.Is(err, authz.CodeCapabilityMismatch))
	// Output:
	// 200 {"ok":true} <nil>
	// true
}
