package egress

import (
	"math/bits"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/ruleprobe"
)

// A Decision is the outcome of [Rules.Decide] for one request. The zero
// Decision denies.
type Decision struct {
	rule uint8 // index of the allowing rule + 1; 0 denies
}

// Allowed reports whether the request may be sent.
func (d Decision) Allowed() bool { return d.rule != 0 }

// Rule returns the index of the rule that allowed the request (the lowest
// one that does), or -1 when the request is not allowed.
func (d Decision) Rule() int { return int(d.rule) - 1 }

// String returns "allow(rule N)" or "deny".
func (d Decision) String() string {
	if !d.Allowed() {
		return "deny"
	}
	return "allow(rule " + strconv.Itoa(d.Rule()) + ")"
}

// Decide decides whether req may be sent. It is pure: it does no I/O and,
// in particular, no DNS lookup, so a host no rule names is refused before
// anything learns of it. It allocates nothing when it allows.
//
// On refusal the Decision is the zero (deny) Decision and the error is a
// [*checkfu.Refusal] with one of the codes listed above. Its message names
// the method, host, port and offending header name; never the path, query
// or any header value, which may carry secrets.
//
// Decide re-checks the invariants of a canonical [Request] that matching
// relies on (scheme, host syntax, port, method token, path form, canonical
// header names), so a hand-built Request is refused rather than matched by
// accident. Pass requests through [CanonicalRequest].
func (rs *Rules) Decide(req *Request) (Decision, error) {
	if req == nil {
		return Decision{}, refuseRequest("egress: nil request")
	}
	ruleprobe.Decided(req.Host)
	if err := checkRequestShape(req); err != nil {
		return Decision{}, err
	}
	if rs == nil {
		rs = &noRules
	}
	listing, err := rs.listing(req.Header)
	if err != nil {
		return Decision{}, err
	}
	// The rules naming the host: exactly, or by a wildcard over the
	// host's parent. Looking a wildcard up by the parent (the name after
	// the first label) is what makes it match exactly one label and never
	// the apex.
	hosts := rs.exact[req.Host]
	if len(rs.wild) > 0 {
		if i := strings.IndexByte(req.Host, '.'); i >= 0 {
			hosts |= rs.wild[req.Host[i+1:]]
		}
	}
	stage := 0 // 1: a rule allowed the destination; 2: also the method
	for m := hosts; m != 0; m &= m - 1 {
		i := bits.TrailingZeros32(m)
		r := &rs.rules[i]
		if r.port != req.Port || !r.matchPath(req.Path) {
			continue
		}
		stage = max(stage, 1)
		if !contains(r.methods, req.Method) {
			continue
		}
		stage = 2
		if listing&(1<<i) == 0 {
			continue
		}
		return Decision{rule: uint8(i + 1)}, nil
	}
	switch stage {
	case 2:
		return Decision{}, checkfu.Refuse(CodeHeaderNotAllowed, "egress: no rule for %s %s allows header %s", req.Method, req.Authority(), checkfu.Quote(rs.unlisted(hosts, req)))
	case 1:
		return Decision{}, checkfu.Refuse(CodeMethodDenied, "egress: no rule for %s allows method %s", req.Authority(), checkfu.Quote(req.Method))
	}
	if !isDNSName(req.Host) {
		return Decision{}, checkfu.Refuse(CodeNoRuleMatched, "egress: no rule matches %s %s (rules never match an IP literal)", req.Method, req.Authority())
	}
	return Decision{}, checkfu.Refuse(CodeNoRuleMatched, "egress: no rule matches %s %s", req.Method, req.Authority())
}

// listing makes one pass over the header names: it refuses a denylisted
// or non-canonical name, and returns the set of rules that list every
// name.
func (rs *Rules) listing(h map[string][]string) (uint32, error) {
	listing := ^uint32(0)
	for k := range h {
		if mask, ok := rs.headers[k]; ok {
			// Some rule lists k, so NewRules has already found it
			// canonical and off the denylist.
			listing &= mask
			continue
		}
		listing = 0
		if !isCanonicalHeaderKey(k) {
			return 0, headerRefusal(h)
		}
		if canonicalHeaderDenied(k) {
			return 0, headerRefusal(h)
		}
	}
	return listing, nil
}

// headerRefusal returns the refusal for headers that include a denylisted
// or non-canonical name: header_denied naming the first denylisted name in
// sorted order, else request_invalid naming the first non-canonical one.
// Sorting keeps the message the same from run to run.
func headerRefusal(h map[string][]string) error {
	names := sortedKeys(h)
	for _, k := range names {
		if HeaderDenied(k) {
			return checkfu.Refuse(CodeHeaderDenied, "egress: header %s is on the fixed denylist", checkfu.Quote(k))
		}
	}
	for _, k := range names {
		if !isCanonicalHeaderKey(k) {
			return refuseRequest("egress: header name %s is not canonical", checkfu.Quote(k))
		}
	}
	return refuseRequest("egress: the request's headers changed while it was being decided")
}

func sortedKeys(h map[string][]string) []string {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// unlisted returns, for a refusal message, the first header (in sorted
// order) that the first rule in hosts allowing req's destination and
// method does not list.
func (rs *Rules) unlisted(hosts uint32, req *Request) string {
	names := sortedKeys(req.Header)
	for m := hosts; m != 0; m &= m - 1 {
		r := &rs.rules[bits.TrailingZeros32(m)]
		if r.port != req.Port || !r.matchPath(req.Path) || !contains(r.methods, req.Method) {
			continue
		}
		for _, k := range names {
			if !contains(r.headers, k) {
				return k
			}
		}
	}
	return ""
}

// noRules stands in for a nil *Rules: it allows nothing.
var noRules Rules

// checkRequestShape refuses a Request that CanonicalRequest could not have
// produced in the ways matching depends on. It allocates only to refuse.
func checkRequestShape(req *Request) error {
	if req.Scheme != "https" && req.Scheme != "http" {
		return refuseRequest("egress: scheme %s is not http or https", checkfu.Quote(req.Scheme))
	}
	if req.Port == 0 {
		return refuseRequest("egress: port 0")
	}
	if !isUpperToken(req.Method) {
		return refuseRequest("egress: method %s is not an upper-case token", checkfu.Quote(req.Method))
	}
	if why := checkPath(req.Path); why != "" {
		return refuseRequest("egress: path %s", why)
	}
	if why := checkQuery(req.RawQuery); why != "" {
		return refuseRequest("egress: query %s", why)
	}
	if !isDNSName(req.Host) && !isIPText(req.Host) {
		return refuseRequest("egress: host %s is neither a canonical DNS name nor an IP literal", checkfu.Quote(req.Host))
	}
	return nil
}

// isDNSName reports whether h has the syntax of a canonical host name.
func isDNSName(h string) bool { return checkDNSName(h) == "" }

// isIPText reports whether h is the canonical text of an IP address.
func isIPText(h string) bool {
	if !strings.ContainsAny(h, ".:") {
		return false
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.Zone() == "" && a.String() == h
}

// matchPath reports whether the rule's prefix matches the escaped path p
// on a segment boundary.
func (r *rule) matchPath(p string) bool {
	n := len(r.prefix)
	if n == 1 { // "/"
		return true
	}
	// The boundary byte is checked first: it rejects most other prefixes
	// without comparing them.
	if len(p) < n || len(p) > n && p[n] != '/' {
		return false
	}
	return p[:n] == r.prefix
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
