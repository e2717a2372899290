package edge_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/egress"
)

// TestCheckRules: the pure check refuses with Send's own code what the
// Connection's rules refuse (a resource outside them, a query the
// arguments make that they do not allow, no rules at all), allows what
// Send would send, and contacts nothing.
func TestCheckRules(t *testing.T) {
	rig := newEdgeRig(t)
	allowed := rig.outbound(rig.list())
	if err := allowed.Connection.CheckRules(allowed.Action); err != nil {
		t.Errorf("CheckRules(an allowed call) = %v", err)
	}
	outside := rig.outbound(rig.invocation("outside.rules", "outside", "GET", "/v2/other", `{}`))
	norules := allowed.Connection
	norules.Rules = nil
	for name, tc := range map[string]struct {
		conn edge.Connection
		out  edge.Outbound
		code checkfu.Code
	}{
		"outside the rules": {outside.Connection, outside, egress.CodeNoRuleMatched},
		"no rules":          {norules, allowed, egress.CodeNoRuleMatched},
	} {
		err := tc.conn.CheckRules(tc.out.Action)
		wantCode(t, err, tc.code)
		if name == "outside the rules" {
			// Send refuses it with the same code.
			_, serr := rig.edge.Send(t.Context(), tc.out)
			if c, _ := checkfu.CodeOf(serr); c != tc.code {
				t.Errorf("Send of what CheckRules refused = %v, want %s", serr, tc.code)
			}
		}
	}
	if n := rig.hits.Load(); n != 0 {
		t.Errorf("the provider was contacted %d times", n)
	}
	if n := rig.custodian.opens.Load(); n != 0 {
		t.Errorf("the credential was opened %d times", n)
	}
}

// The gateway asks whether the rules allow a call before it spends the
// lease: CheckRules builds the request the edge would send and decides
// it, sending nothing.
func ExampleConnection_CheckRules() {
	rig := newEdgeRig(&testing.T{})
	allowed := rig.outbound(rig.list())
	fmt.Println(allowed.Connection.CheckRules(allowed.Action))
	outside := rig.outbound(rig.invocation("outside.rules", "outside", "GET", "/v2/other", `{}`))
	err := outside.Connection.CheckRules(outside.Action)
	fmt.Println(errors.Is(err, egress.CodeNoRuleMatched), rig.hits.Load())
	// Output:
	// <nil>
	// true 0
}
