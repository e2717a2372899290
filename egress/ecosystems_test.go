package egress_test

import (
	"errors"
	"testing"

	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/internal/copytest"
)

// TestPresetEcosystemsIsACopy: the ecosystems PresetEcosystems returns
// are the caller's own; writing over them neither changes the next
// call's answer nor admits a catalog entry of the written name.
func TestPresetEcosystemsIsACopy(t *testing.T) {
	copytest.Fresh(t, "PresetEcosystems", egress.PresetEcosystems, "haskell")
	_, err := egress.NewPresetCatalog("2026-12-05.1", []egress.PresetHost{{Ecosystem: "haskell", Host: "hackage.haskell.org", Port: 443, Purpose: "index"}})
	if !errors.Is(err, egress.CodePolicyInvalid) {
		t.Fatalf("a catalog entry of an ecosystem written over a returned slice: %v, want %s", err, egress.CodePolicyInvalid)
	}
}
