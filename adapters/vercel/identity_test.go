package vercel_test

import (
	"testing"

	"github.com/checkfu/checkfu/adapters/internal/vendortest"
	"github.com/checkfu/checkfu/adapters/vercel"
)

// TestWorkerRevisionIsSeparateIdentity: a complete, production,
// correctly signed receipt for checkfu:vercel-provider@N certifies that
// exact pair and never checkfu:vercel-worker-provider@N, although the
// vendor and the revision number are the same; and Vercel's own
// advertisement caps it at advisory_filter, receipt or not.
func TestWorkerRevisionIsSeparateIdentity(t *testing.T) {
	vendortest.CheckIdentities(t, vendortest.Identities{
		Name: "vercel", Identity: vercel.Identity(), Worker: vercel.WorkerIdentity(),
		Capability: vercel.Capability(), Placement: vercel.Placement,
	})
}

func TestCapabilityIsHonest(t *testing.T) {
	vendortest.CheckCapability(t, vercel.Capability(), vercel.Placement)
}
