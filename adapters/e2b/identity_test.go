package e2b_test

import (
	"testing"

	"github.com/checkfu/checkfu/adapters/e2b"
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
)

// TestWorkerRevisionIsSeparateIdentity: a complete, production,
// correctly signed receipt for checkfu:e2b-provider@N certifies that
// exact pair and never checkfu:e2b-worker-provider@N, although the
// vendor and the revision number are the same; and E2B's own
// advertisement caps it at advisory_filter, receipt or not.
func TestWorkerRevisionIsSeparateIdentity(t *testing.T) {
	vendortest.CheckIdentities(t, vendortest.Identities{
		Name: "e2b", Identity: e2b.Identity(), Worker: e2b.WorkerIdentity(),
		Capability: e2b.Capability(), Placement: e2b.Placement,
	})
}

func TestCapabilityIsHonest(t *testing.T) {
	vendortest.CheckCapability(t, e2b.Capability(), e2b.Placement)
}
