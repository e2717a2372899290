package egresstest_test

import (
	"testing"

	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/egresstest"
)

// A component that wraps egress.Rules (here, trivially, the Rules
// themselves) runs the property suite from its own tests.
func ExampleTestDecider() {
	_ = func(t *testing.T) {
		egresstest.TestDecider(t, func(rs *egress.Rules) egresstest.Decider { return rs })
	}
}
