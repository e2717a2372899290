package custody_test

import (
	"testing"

	"github.com/checkfu/checkfu/custody/custodytest"
)

// exposureAllow lists exported declarations that may reach a Secret, with
// the reason. Keep it empty unless a reviewer agrees: every entry is a
// place a Secret could be printed or returned from. An entry that stops
// being needed fails the test.
var exposureAllow = map[string]string{}

// TestNoExportedTypeHoldsASecret walks every exported declaration of every
// package in this module (listed by the go command, so packages added
// later are covered without registration) and fails if a custody.Secret
// or a Secret's plaintext box is reachable from it. Only package custody
// and its sub-packages may return Secrets from functions and methods (the
// boundary); no exported type anywhere, custody included, may hold one in
// a field. The planted-violation tests in custodytest prove the walker
// reds.
func TestNoExportedTypeHoldsASecret(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the whole module's export data")
	}
	m, err := custodytest.LoadModule("..")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Packages) < 3 {
		t.Fatalf("loaded only %v: the loader is broken", m.ImportPaths)
	}
	vs := custodytest.CheckExposure(m.Packages, custodytest.ExposureRules{
		Boundary: []string{m.Path + "/custody"},
		Allow:    exposureAllow,
	})
	for _, v := range vs {
		t.Errorf("%s", v)
	}
	t.Logf("checked %d packages", len(m.Packages))
}
