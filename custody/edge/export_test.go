package edge

import (
	"context"
	"net/http"
	"strconv"

	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/internal/outbound"
	"github.com/checkfu/checkfu/egress"
)

// BenchPage is benchPage, for the external benchmarks.
var BenchPage = benchPage

// MintForTest makes the Authorized value the call pipeline would make for
// action through conn, spending nothing: only this package's tests can
// build it (the file compiles into test binaries alone), to reach the
// edge's own checks behind the pipeline's.
func MintForTest(conn Connection, action authz.Action, tool string, protocol authz.Protocol, lease authz.Lease, scope authz.LeaseScope) (Authorized, error) {
	c := &outbound.Call{Credential: conn.Credential, Rules: conn.Rules, Action: action, Digest: action.Digest(),
		Tool: tool, Protocol: protocol, Lease: lease, Scope: scope}
	// A request even for a remote MCP tool (the pipeline keeps none for
	// one), so that the edge's own protocol check is what refuses it.
	req, err := outbound.Build(context.Background(), action)
	if err != nil {
		return Authorized{}, err
	}
	c.Request = req
	// As the Connection's rules allowed it or, for a request they refuse,
	// as rules made for it alone allowed it (as if another Connection's
	// had), so that the egress client's own decision is what refuses it.
	allowed, err := conn.Rules.Allow(req)
	if err != nil {
		allowed, err = rulesFor(req).Allow(req)
	}
	if err != nil {
		return Authorized{}, err
	}
	c.Allowed = &allowed
	return outbound.Mint(c), nil
}

// rulesFor returns rules that allow req and nothing but its destination,
// method and headers.
func rulesFor(req *http.Request) *egress.Rules {
	port, _ := strconv.Atoi(req.URL.Port())
	if port == 0 {
		port = 443
	}
	var headers []string
	for k := range req.Header {
		headers = append(headers, k)
	}
	rules, _ := egress.NewRules([]egress.Rule{{Host: req.URL.Hostname(), Port: uint16(port), Methods: []string{req.Method}, Headers: headers}})
	return rules
}

// MintModelForTest makes the Authorized value the call pipeline would make
// for a model call of req through conn, with the key in keyHeader,
// spending nothing: req as by allowed it (conn.Rules for the pipeline's
// own decision, other rules for a foreign one), or with no decision at
// all when by is nil.
func MintModelForTest(conn Connection, by *egress.Rules, req *http.Request, keyHeader string, lease authz.Lease, scope authz.LeaseScope) (Authorized, error) {
	action := authz.Action{Capability: "model.chat", Operation: req.Method, Resource: req.URL.String(), Effect: authz.ReadOnly}
	c := &outbound.Call{Credential: conn.Credential, Rules: conn.Rules, Action: action, Digest: action.Digest(),
		Tool: "model", Protocol: authz.ModelAPI, Request: req, Lease: lease, Scope: scope, KeyHeader: keyHeader}
	if by != nil {
		allowed, err := by.Allow(req)
		if err != nil {
			return Authorized{}, err
		}
		c.Allowed = &allowed
	}
	return outbound.Mint(c), nil
}
