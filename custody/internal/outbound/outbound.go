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
//   - [Build] is pure: the request is made from the canonical action
//     alone; nothing is sent and no credential is touched. The pipeline
//     has the Connection's rules decide it (egress.Rules.Allow), once,
//     and the edge sends what they allowed.
package outbound

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"
	"unicode/utf8"

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
	// Request is the request built from Action and decided by Rules,
	// and Allowed is that decision, which the edge's egress client sends
	// without deciding again (HTTPS and ModelAPI registrations; a
	// remote MCP tool's requests are built by the edge's transport, one
	// per exchange).
	Request  *http.Request
	Allowed  *egress.Allowed
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

// Bodiless reports whether op sends its arguments in the query rather
// than a body: the rule authz applies when it validates a registration.
func Bodiless(op string) bool { return op == "GET" || op == "HEAD" || op == "DELETE" }

// queryOf turns canonical object arguments of scalars into a query string
// with sorted keys. A number keeps its literal text (as json.Number does);
// an object, array or null member is refused. It accepts and refuses
// what json.Unmarshal into a map[string]json.RawMessage did (a body that
// is not one JSON value, or not an object or null, is refused; a
// repeated member's last value counts), in one pass over the members:
// json.Valid first, so that the walk reads only valid JSON, and a
// string with no escape is taken as it stands.
func queryOf(body []byte) (string, error) {
	if !json.Valid(body) {
		return "", errNotObject
	}
	i := skipSpace(body, 0)
	if body[i] == 'n' {
		return "", nil // null: no arguments, as json.Unmarshal gives a nil map
	}
	if body[i] != '{' {
		return "", errNotObject
	}
	v := url.Values{}
	var bad map[string]bool // members whose last value is not a scalar
	for i = skipSpace(body, i+1); body[i] != '}'; i = skipSpace(body, i+1) {
		if body[i] == ',' {
			i = skipSpace(body, i+1)
		}
		end := stringEnd(body, i)
		k, err := jsonString(body[i:end])
		if err != nil {
			return "", errNotObject
		}
		i = skipSpace(body, end)
		i = skipSpace(body, i+1) // the colon
		switch c := body[i]; {
		case c == '"':
			end = stringEnd(body, i)
			s, err := jsonString(body[i:end])
			if err != nil {
				return "", checkfu.Refuse(authz.CodeArgumentsInvalid, "edge: query argument %s is not a string", checkfu.Quote(k))
			}
			v.Set(k, s)
			delete(bad, k)
		case c == 't' || c == 'f' || c == '-' || '0' <= c && c <= '9':
			end = i + 1
			for end < len(body) && isScalarByte(body[end]) {
				end++
			}
			v.Set(k, string(body[i:end])) // true, false, or a number's literal
			delete(bad, k)
		default:
			end = valueEnd(body, i)
			if bad == nil {
				bad = map[string]bool{}
			}
			bad[k] = true
		}
		i = end - 1
	}
	for k := range bad {
		return "", checkfu.Refuse(authz.CodeArgumentsInvalid, "edge: query argument %s is not a scalar", checkfu.Quote(k))
	}
	return v.Encode(), nil
}

var errNotObject = checkfu.Refuse(authz.CodeArgumentsInvalid, "edge: query arguments are not an object")

// skipSpace returns the index of the first byte of b at or after i that
// is not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// isScalarByte reports whether c can continue a literal true, false or
// number.
func isScalarByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'E'
}

// stringEnd returns the index just past the valid JSON string that
// starts at b[i].
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// valueEnd returns the index just past the valid JSON value (null, an
// object or an array) that starts at b[i].
func valueEnd(b []byte, i int) int {
	if b[i] == 'n' {
		return i + len("null")
	}
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			j = stringEnd(b, j) - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return j + 1
			}
		}
	}
	return len(b)
}

// jsonString decodes the valid JSON string raw, quotes included: as it
// stands when it has no escape and is valid UTF-8, else as
// json.Unmarshal decodes it.
func jsonString(raw []byte) (string, error) {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}
