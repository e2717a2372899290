package edge_test

import (
	"context"
	"testing"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
)

// revokingCustodian revokes a lease while it opens the credential, as an
// operator's revocation lands while a runtime is busy refreshing a token
// (which can take as long as the token endpoint does).
type revokingCustodian struct {
	custody.Custodian
	leases *authz.Leases
	lease  string
}

func (c *revokingCustodian) Open(ctx context.Context, b custody.Binding) (*custody.Secret, error) {
	if err := c.leases.Revoke(c.lease); err != nil {
		return nil, err
	}
	return c.Custodian.Open(ctx, b)
}

// A lease revoked after the call spent it but before the credential was
// attached stops the call: the lease is checked again, in the attach hook,
// immediately before the credential is added, and nothing is sent.
func TestEdgeRevocationDuringOpenStopsTheCall(t *testing.T) {
	rig := newEdgeRig(t)
	ed, err := edge.NewEdge(edge.EdgeConfig{
		Leases:    rig.leases,
		Custodian: &revokingCustodian{Custodian: rig.native, leases: rig.leases, lease: rig.lease.ID},
		Dialer:    rig.dialer, RootCAs: rig.roots,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ed.CloseIdleConnections)
	hits := rig.hits.Load()
	resp, err := rig.via(ed).Call(context.Background(), rig.list())
	wantCode(t, err, authz.CodeLeaseRevoked)
	if resp != nil || rig.hits.Load() != hits {
		t.Fatalf("a call under a revoked lease reached the provider: resp %v, hits %d", resp, rig.hits.Load()-hits)
	}
}
