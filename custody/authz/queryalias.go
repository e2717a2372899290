package authz

import (
	"fmt"
	"strings"

	"github.com/checkfu/checkfu"
)

// queryAliases returns the names other than k that a common server-side
// query parser reads the parameter name k as:
//
//   - PHP, Rack (Rails) and qs (Node) read a name with brackets as its
//     part before the first '[' ("state[]", "state[0]", "filter[status]"
//     are "state", "state", "filter");
//   - qs with allowDots reads "a.b" as "a";
//   - PHP turns '.' and ' ' in a name's base, and a '[' that no ']'
//     closes, into '_' ("a.b" and "a[b" are "a_b").
//
// A name with none of '[', '.' or ' ' has no alias.
func queryAliases(k string) []string {
	if !strings.ContainsAny(k, "[. ") {
		return nil
	}
	var out []string
	add := func(a string) {
		if a != "" && a != k {
			out = append(out, a)
		}
	}
	base := k
	if i := strings.IndexByte(k, '['); i >= 0 {
		base = k[:i]
		add(base)
		if !strings.Contains(k[i:], "]") {
			add(phpMangle(k[:i]) + "_" + k[i+1:])
		}
	}
	if i := strings.IndexByte(base, '.'); i >= 0 {
		add(base[:i])
	}
	add(phpMangle(base))
	return out
}

// phpMangle is what PHP makes of a parameter's base name: leading spaces
// dropped, and '.' and ' ' turned into '_'.
func phpMangle(s string) string {
	s = strings.TrimLeft(s, " ")
	return strings.Map(func(r rune) rune {
		if r == '.' || r == ' ' {
			return '_'
		}
		return r
	}, s)
}

// checkQueryAliases refuses a bodiless call's argument whose name a
// common query parser reads as another name: one the call also sends,
// or one the tool's schema declares as a top-level property (declared).
// Sent in the query, {"state":"open","state[]":"all"} or {"state[]":"all"}
// would reach such a server as state=all, past a schema that checks only
// "state". A name the schema declares itself is never refused, so an
// API whose parameters are spelled with brackets ("ids[]") keeps them.
func checkQueryAliases(args map[string]any, declared map[string]bool) error {
	for k := range args {
		if declared[k] {
			continue
		}
		for _, a := range queryAliases(k) {
			_, sent := args[a]
			if sent || declared[a] {
				return fmt.Errorf("property %s is read as %s by common query parsers", checkfu.Quote(k), checkfu.Quote(a))
			}
		}
	}
	return nil
}

// declaredProperties returns the names of the top-level properties the
// schema tree (as parseStrictJSON decodes it) declares, or nil.
func declaredProperties(tree any) map[string]bool {
	m, _ := tree.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	if len(props) == 0 {
		return nil
	}
	out := make(map[string]bool, len(props))
	for k := range props {
		out[k] = true
	}
	return out
}

// checkBodyMethodOverride refuses a body whose top-level object has a
// member named _method, in any case. Laravel reads that member of a POST's
// JSON body as the request's method, as it and others read it from a
// form: {"_method":"DELETE"} sent to POST /v1/items would reach a DELETE
// route through a rule that allows only POST, as a _method query
// parameter (refused by egress) or a method-override header (denied by
// egress) would. A schema that declares the member does not make it safe:
// the rule, not the schema, says which methods the call may use.
func checkBodyMethodOverride(v any) error {
	m, _ := v.(map[string]any)
	for k := range m {
		if strings.EqualFold(k, "_method") {
			return fmt.Errorf("member %s is read as a method override", checkfu.Quote(k))
		}
	}
	return nil
}
