// Package proptest is an integration a host platform might write over
// checkfu's egress rules, and the property tests that check it with
// checkfu's rapid generators (egress/egresstest) and its property suite
// (egresstest.TestDecider). The point is the test: read policy_test.go,
// and run it.
//
//	go test ./examples/proptest
//
// The integration, [Policy], puts a platform-wide blocklist of domains in
// front of a Connection's rules: a blocked domain refuses itself and every
// name under it, whatever the Connection's rules say. Its invariants,
// each a property in policy_test.go:
//
//   - It never widens: whatever it allows, the rules alone allow, by the
//     same rule.
//   - A host at or under a blocked domain is never allowed, and is refused
//     with the code host_blocked.
//   - For any other host it decides exactly as the rules do.
//
// Requests must be canonical (egress.CanonicalRequest): the blocklist
// compares canonical host names, and the rules refuse a request that is
// not canonical, so a non-canonical spelling of a blocked host is refused
// too, by the rules.
package proptest

import (
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
)

// codeHostBlocked is the refusal code of a request to a blocked domain.
// It is the platform's own code, not one of checkfu's.
const codeHostBlocked checkfu.Code = "host_blocked"

// A Policy decides outbound requests: the platform's blocklist first,
// then the Connection's rules.
type Policy struct {
	rules   *egress.Rules
	blocked []string
}

// New returns the policy of rules under the platform's blocked domains,
// each a canonical DNS name (the output of egress.CanonicalHost).
func New(rules *egress.Rules, blocked ...string) *Policy {
	return &Policy{rules: rules, blocked: blocked}
}

// Decide refuses a request to a blocked domain or a name under one with
// host_blocked, and otherwise returns the rules' decision.
func (p *Policy) Decide(req *egress.Request) (egress.Decision, error) {
	for _, b := range p.blocked {
		if req.Host == b || strings.HasSuffix(req.Host, "."+b) {
			return egress.Decision{}, checkfu.Refuse(codeHostBlocked, "platform: host %s is under the blocked domain %s", checkfu.Quote(req.Host), checkfu.Quote(b))
		}
	}
	return p.rules.Decide(req)
}
