package egress

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/strictjson"
	"github.com/santhosh-tekuri/jsonschema/v5"
	"golang.org/x/net/publicsuffix"
)

// MaxRules is the most rules one Connection may carry.
const MaxRules = 32

// maxRulesDoc bounds a rules document.
const maxRulesDoc = 256 << 10

// A Rule allows outbound requests to one destination. It is the JSON form
// of one element of a rules document:
//
//	{"host": "api.example.com", "port": 443, "path_prefix": "/v1",
//	 "methods": ["GET", "POST"], "headers": ["Accept", "Content-Type"]}
//
// A Rule as written may be in any spelling [NewRules] accepts; a Rule
// returned by [Rules.Rule] is canonical.
type Rule struct {
	// Host is a DNS name, or "*." followed by a DNS name that is not a
	// public suffix. "*.example.com" matches exactly one label under
	// example.com ("a.example.com", not "a.b.example.com") and never the
	// apex "example.com". Canonical form: lower-case IDNA A-label, no
	// trailing dot. IP literals are refused.
	Host string `json:"host"`
	// Port is the destination port, 1-65535. There is no default.
	Port uint16 `json:"port"`
	// PathPrefix is an escaped path in canonical form (see
	// [CanonicalRequest]) without a trailing slash, matched on segment
	// boundaries: "/v1" matches "/v1" and "/v1/x", never "/v10". Empty
	// means "/", which matches every path.
	PathPrefix string `json:"path_prefix"`
	// Methods are the allowed methods, at least one. Canonical form:
	// upper-case, sorted, no duplicates. CONNECT, TRACE and TRACK are
	// refused: a tunnel escapes the rule, and a trace echoes the
	// credential custody attaches back to the caller.
	Methods []string `json:"methods"`
	// Headers are the request headers allowed to pass; every other
	// header makes the request refused. Canonical form: canonical header
	// names (http.CanonicalHeaderKey), sorted, no duplicates. A name on
	// the fixed denylist ([HeaderDenied]) is refused.
	Headers []string `json:"headers"`
}

// Rules is a canonical, immutable set of 1 to [MaxRules] egress rules. It
// is safe for concurrent use. The zero Rules and a nil *Rules allow
// nothing.
//
// A request is allowed when some rule allows its host, port, path,
// method and every header it carries; the order of rules only decides
// which index [Decision.Rule] reports (the lowest that allows). Rules that
// are identical after canonicalisation are refused as duplicates.
type Rules struct {
	rules []rule
	// Indexes built once by NewRules so that Decide does a few map
	// lookups instead of comparing every rule. Each value is a bit set of
	// rule indexes (MaxRules fits in a uint32).
	exact   map[string]uint32 // canonical host -> rules naming it exactly
	wild    map[string]uint32 // "example.com" -> rules for "*.example.com"
	headers map[string]uint32 // header name -> rules listing it
}

// rule is one canonical rule, laid out for matching.
type rule struct {
	src      Rule   // canonical, as rendered
	host     string // exact host, or for a wildcard the name under "*." ("example.com")
	wildcard bool
	port     uint16
	prefix   string // "/" or a prefix without trailing slash
	methods  []string
	headers  []string
}

// NewRules canonicalises rules and returns them as a Rules. It refuses,
// with code [CodeRulesInvalid], zero rules, more than [MaxRules], and any
// rule that does not canonicalise; the refusal names the rule by index and
// carries the [CodeHostInvalid] code in its chain where a host was refused.
func NewRules(rules []Rule) (*Rules, error) {
	if len(rules) == 0 {
		return nil, checkfu.Refuse(CodeRulesInvalid, "egress: no rules (a Connection needs 1 to %d)", MaxRules)
	}
	if len(rules) > MaxRules {
		return nil, checkfu.Refuse(CodeRulesInvalid, "egress: %d rules (a Connection may carry at most %d)", len(rules), MaxRules)
	}
	out := make([]rule, 0, len(rules))
	for i, r := range rules {
		c, err := canonicalRule(r)
		if err != nil {
			var ref *checkfu.Refusal
			if errors.As(err, &ref) && ref.Code == CodeHostInvalid {
				// Keep the host refusal's code in the chain (errors.Is finds
				// it) without repeating "refused:" in the text.
				msg := fmt.Sprintf("egress: rule %d: %s", i, strings.TrimPrefix(ref.Message, "egress: "))
				return nil, &checkfu.Refusal{Code: CodeRulesInvalid, Message: msg, Err: CodeHostInvalid}
			}
			return nil, checkfu.Refuse(CodeRulesInvalid, "egress: rule %d: %v", i, err)
		}
		for j := range out {
			if out[j].equal(c) {
				return nil, checkfu.Refuse(CodeRulesInvalid, "egress: rule %d duplicates rule %d; remove one", i, j)
			}
		}
		out = append(out, c)
	}
	return index(out), nil
}

// index builds the lookup tables of a Rules.
func index(rules []rule) *Rules {
	rs := &Rules{rules: rules, exact: map[string]uint32{}, wild: map[string]uint32{}, headers: map[string]uint32{}}
	for i, r := range rules {
		bit := uint32(1) << i
		if r.wildcard {
			rs.wild[r.host] |= bit
		} else {
			rs.exact[r.host] |= bit
		}
		for _, h := range r.headers {
			rs.headers[h] |= bit
		}
	}
	return rs
}

// canonicalRule canonicalises one rule. Errors other than host refusals
// are plain errors, wrapped by NewRules.
func canonicalRule(r Rule) (rule, error) {
	var c rule
	host := r.Host
	if strings.HasPrefix(host, "*.") {
		c.wildcard = true
		host = host[2:]
	}
	if strings.Contains(host, "*") {
		return c, fmt.Errorf("host %s: a wildcard is allowed only as a whole leading \"*.\" label", checkfu.Quote(r.Host))
	}
	h, err := CanonicalHost(host)
	if err != nil {
		return c, err
	}
	c.src.Host, c.host = h, h
	if c.wildcard {
		if ps, _ := publicsuffix.PublicSuffix(h); ps == h {
			return c, fmt.Errorf("host %s: a wildcard under the public suffix %q would match other owners' names; list the hosts instead", checkfu.Quote(r.Host), h)
		}
		c.src.Host = "*." + h
	}
	if r.Port == 0 {
		return c, fmt.Errorf("port 0: give the destination port explicitly (1-65535)")
	}
	c.src.Port, c.port = r.Port, r.Port
	prefix := r.PathPrefix
	if prefix == "" {
		prefix = "/"
	}
	if why := checkPath(prefix); why != "" {
		return c, fmt.Errorf("path_prefix %s %s", checkfu.Quote(prefix), why)
	}
	if len(prefix) > 1 && strings.HasSuffix(prefix, "/") {
		return c, fmt.Errorf("path_prefix %s ends in \"/\"; write %s (prefixes match on segment boundaries)", checkfu.Quote(prefix), checkfu.Quote(strings.TrimRight(prefix, "/")))
	}
	c.src.PathPrefix, c.prefix = prefix, prefix
	if len(r.Methods) == 0 {
		return c, fmt.Errorf("no methods: list at least one")
	}
	for _, m := range r.Methods {
		u := asciiUpper(m)
		if !isUpperToken(u) {
			return c, fmt.Errorf("method %s is not a token", checkfu.Quote(m))
		}
		switch u {
		case http.MethodConnect, http.MethodTrace, "TRACK":
			return c, fmt.Errorf("method %q is never allowed (a tunnel escapes the rule; a trace echoes credentials)", u)
		}
		c.methods = append(c.methods, u)
	}
	slices.Sort(c.methods)
	if i := firstDup(c.methods); i >= 0 {
		return c, fmt.Errorf("method %s is listed twice", checkfu.Quote(c.methods[i]))
	}
	c.headers = make([]string, 0, len(r.Headers))
	for _, name := range r.Headers {
		if name == "" || strings.IndexFunc(name, func(r rune) bool { return r >= utf8.RuneSelf || !isTokenChar(byte(r)) }) >= 0 {
			return c, fmt.Errorf("header %s is not a token", checkfu.Quote(name))
		}
		k := http.CanonicalHeaderKey(name)
		if canonicalHeaderDenied(k) {
			return c, fmt.Errorf("header %s is on the fixed denylist and cannot be allowed", checkfu.Quote(name))
		}
		c.headers = append(c.headers, k)
	}
	slices.Sort(c.headers)
	if i := firstDup(c.headers); i >= 0 {
		return c, fmt.Errorf("header %s is listed twice", checkfu.Quote(c.headers[i]))
	}
	c.src.Methods, c.src.Headers = c.methods, c.headers
	return c, nil
}

// asciiUpper upper-cases the ASCII letters of s and leaves every other
// byte alone (strings.ToUpper would turn "ſ" into "S").
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func firstDup(sorted []string) int {
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return i
		}
	}
	return -1
}

func (r rule) equal(o rule) bool {
	return r.host == o.host && r.wildcard == o.wildcard && r.port == o.port && r.prefix == o.prefix &&
		slices.Equal(r.methods, o.methods) && slices.Equal(r.headers, o.headers)
}

// Len returns the number of rules: 0 for the zero Rules or nil.
func (rs *Rules) Len() int {
	if rs == nil {
		return 0
	}
	return len(rs.rules)
}

// Rule returns the canonical form of rule i. It panics if i is out of
// range, like a slice index.
func (rs *Rules) Rule(i int) Rule {
	r := rs.rules[i].src
	r.Methods = slices.Clone(r.Methods)
	r.Headers = slices.Clone(r.Headers)
	return r
}

// Equal reports whether rs and o hold the same canonical rules in the same
// order.
func (rs *Rules) Equal(o *Rules) bool {
	if rs.Len() != o.Len() {
		return false
	}
	for i := 0; i < rs.Len(); i++ {
		if !rs.rules[i].equal(o.rules[i]) {
			return false
		}
	}
	return true
}

// MarshalJSON renders the canonical rules as a rules document (a JSON
// array) that [ParseRules] accepts and parses back to equal Rules. Every
// field is written, also the defaults. The zero Rules renders as an empty
// array, which ParseRules refuses.
func (rs *Rules) MarshalJSON() ([]byte, error) {
	out := make([]Rule, rs.Len())
	for i := range out {
		out[i] = rs.rules[i].src
	}
	return json.Marshal(out)
}

// UnmarshalJSON decodes a rules document with [ParseRules]. It is meant for
// decoding into a fresh value (Rules is otherwise immutable).
func (rs *Rules) UnmarshalJSON(doc []byte) error {
	parsed, err := ParseRules(doc)
	if err != nil {
		return err
	}
	*rs = *parsed
	return nil
}

//go:embed rules.schema.json
var rulesSchemaJSON []byte

// RulesSchema returns the JSON Schema (draft 2020-12) every rules
// document is validated against. The schema checks shape only; the
// canonicalisation rules of [NewRules] apply on top.
func RulesSchema() []byte { return bytes.Clone(rulesSchemaJSON) }

var rulesSchema = sync.OnceValue(func() *jsonschema.Schema {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	const url = "file:///checkfu/egress/rules.schema.json"
	if err := c.AddResource(url, bytes.NewReader(rulesSchemaJSON)); err != nil {
		panic("egress: embedded rules schema: " + err.Error())
	}
	return c.MustCompile(url)
})

// ParseRules parses a rules document: a JSON array of 1 to [MaxRules]
// rule objects (see [Rule]). Decoding is strict: the document must be
// valid UTF-8 of at most 256 KiB, hold exactly one JSON value (no trailing
// data), repeat no object key, use only the fields of Rule with their
// exact lower-case names, and validate against [RulesSchema]. The rules
// are then canonicalised by [NewRules]. Every refusal has code
// [CodeRulesInvalid].
func ParseRules(doc []byte) (*Rules, error) {
	v, err := strictjson.Parse(doc, rulesJSON)
	if err != nil {
		return nil, checkfu.Refuse(CodeRulesInvalid, "egress: rules document: %v", err)
	}
	if err := rulesSchema().Validate(v); err != nil {
		return nil, checkfu.Refuse(CodeRulesInvalid, "egress: rules document does not match the schema: %s", schemaMessage(err))
	}
	var rules []Rule
	if err := strictjson.Unmarshal(doc, &rules, rulesJSON); err != nil {
		return nil, checkfu.Refuse(CodeRulesInvalid, "egress: rules document: %v", err)
	}
	return NewRules(rules)
}

// rulesJSON bounds a rules document: 256 KiB, nested at most 16 deep
// (a rules document needs 3).
var rulesJSON = strictjson.Options{MaxDepth: maxJSONDepth, MaxBytes: maxRulesDoc}

// maxJSONDepth bounds the nesting of the rules and policy documents.
const maxJSONDepth = 16

// schemaMessage flattens a schema validation error to its leaf causes.
func schemaMessage(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var msgs []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := e.InstanceLocation
			if loc == "" {
				loc = "/"
			}
			msgs = append(msgs, fmt.Sprintf("at %s: %s", loc, e.Message))
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(msgs, "; ")
}
