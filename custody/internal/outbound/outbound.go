// Package outbound carries one authorized call from the call pipeline
// (package custody/pipeline), which makes it, to the outbound edge
// (package custody/edge), which sends it.
//
// Invariants:
//
//   - Only packages under custody can import this package, so nothing
//     outside custody can make a non-zero [Authorized]: the compiler
//     keeps every other caller from reaching the edge with a call that
//     did not pass the pipeline. The module's import rules name the
//     only importers (custody/pipeline, which mints, and custody/edge,
//     which takes).
//   - An Authorized value is taken once: [Take] hands its call to the
//     first caller and nothing to any later one, so one lease use and one
//     approval stand for one request.
//   - [Build] and [Decide] are pure: the request is made from the
//     canonical action alone and the rules decide it; nothing is sent and
//     no credential is touched.
package outbound

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/egress"
)

// Authorized is one call that passed the pipeline: its fields are
// unexported, so outside custody only the zero value can be made, and
// the edge refuses that.
type Authorized struct {
	c *Call
}

// A Call is what the pipeline decided, in the form the edge sends it.
type Call struct {
	Credential address.Binding
	Rules      *egress.Rules
	Action     authz.Action
	Digest     string // Action.Digest, computed once
	Tool       string
	Protocol   authz.Protocol
	// Request is the request built from Action and decided by Rules
	// (HTTPS registrations only; a remote MCP tool's requests are built
	// by the edge's transport, one per exchange).
	Request  *http.Request
	Lease    authz.Lease // the lease, as spent for this call
	Scope    authz.LeaseScope
	Approval string // the approval the call runs under, or empty
	Session  string // the scope the approval binds
	// KeyHeader and KeyPrefix, for a ModelAPI call only, are where the
	// edge puts the model key: the dialect's header (X-Api-Key, or
	// Authorization after "Bearer "). The request never carries the
	// agent's own.
	KeyHeader, KeyPrefix string

	taken atomic.Bool
}

// Mint returns the Authorized value of c.
func Mint(c *Call) Authorized { return Authorized{c: c} }

// Take returns a's call the first time it is asked, and false for the
// zero value and for every later time.
func Take(a Authorized) (*Call, bool) {
	if a.c == nil || a.c.taken.Swap(true) {
		return nil, false
	}
	return a.c, true
}

// Build builds the outbound request from a alone: the registered
// operation on the registered resource, the canonical arguments as the
// JSON body, or for a bodiless operation (GET, HEAD, DELETE) as the
// query with sorted keys.
func Build(ctx context.Context, a authz.Action) (*http.Request, error) {
	target := a.Resource
	var body io.Reader
	if Bodiless(a.Operation) {
		q, err := queryOf(a.Body)
		if err != nil {
			return nil, err
		}
		if q != "" {
			target += "?" + q
		}
	} else {
		body = bytes.NewReader(a.Body)
	}
	req, err := http.NewRequestWithContext(ctx, a.Operation, target, body)
	if err != nil {
		return nil, checkfu.Refuse(authz.CodeCapabilityMismatch, "edge: capability %s: the registered resource does not form a request", checkfu.Quote(a.Capability))
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// Decide lets rules decide req (no rules refuse everything). The egress
// client decides again as it sends.
func Decide(rules *egress.Rules, req *http.Request) error {
	creq, err := egress.CanonicalRequest(req)
	if err != nil {
		return err
	}
	_, err = rules.Decide(&creq)
	return err
}

// Bodiless reports whether op sends its arguments in the query rather
// than a body: the rule authz applies when it validates a registration.
func Bodiless(op string) bool { return op == "GET" || op == "HEAD" || op == "DELETE" }

// queryOf turns canonical object arguments of scalars into a query string
// with sorted keys. A number keeps its literal text (as json.Number does);
// an object, array or null member is refused.
func queryOf(body []byte) (string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return "", checkfu.Refuse(authz.CodeArgumentsInvalid, "edge: query arguments are not an object")
	}
	v := make(url.Values, len(m))
	for k, raw := range m {
		switch c := raw[0]; {
		case c == '"':
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", checkfu.Refuse(authz.CodeArgumentsInvalid, "edge: query argument %s is not a string", checkfu.Quote(k))
			}
			v.Set(k, s)
		case c == 't' || c == 'f' || c == '-' || '0' <= c && c <= '9':
			v.Set(k, string(raw)) // true, false, or a number's literal
		default:
			return "", checkfu.Refuse(authz.CodeArgumentsInvalid, "edge: query argument %s is not a scalar", checkfu.Quote(k))
		}
	}
	return v.Encode(), nil
}
