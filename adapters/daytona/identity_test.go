package daytona_test

import (
	"testing"

	"github.com/checkfu/checkfu/adapters/daytona"
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
)

// TestWorkerRevisionIsSeparateIdentity: a complete, production,
// correctly signed receipt for checkfu:daytona-provider@N certifies that
// exact pair and never checkfu:daytona-worker-provider@N, although the
// vendor and the revision number are the same; and Daytona's own
// advertisement caps it at advisory_filter, receipt or not.
func TestWorkerRevisionIsSeparateIdentity(t *testing.T) {
	vendortest.CheckIdentities(t, vendortest.Identities{
		Name: "daytona", Identity: daytona.Identity(), Worker: daytona.WorkerIdentity(),
		Capability: daytona.Capability(), Placement: daytona.Placement,
	})
}

func TestCapabilityIsHonest(t *testing.T) {
	vendortest.CheckCapability(t, daytona.Capability(), daytona.Placement)
}
