package egress

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/checkfu/checkfu"
	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/idna"
)

// hostProfile maps and validates host names for lookup: UTS #46
// non-transitional mapping (case and width folding, so "ＥＸＡＭＰＬＥ.com"
// becomes "example.com"), STD3 ASCII rules (letters, digits and hyphen
// only), hyphen and joiner checks and the Bidi rule. DNS lengths are
// checked by canonicalHost itself, after one trailing dot is stripped.
var hostProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.Transitional(false),
	idna.StrictDomainName(true),
	idna.ValidateLabels(true),
	idna.VerifyDNSLength(false),
)

// maxHostInput bounds the input CanonicalHost will look at, so that a
// hostile name cannot make the IDNA mapper do unbounded work.
const maxHostInput = 1024

// CanonicalHost returns the canonical form of the DNS name s: its
// lower-case IDNA A-label form (UTS #46 non-transitional lookup mapping,
// STD3 rules, Bidi rule) with at most one trailing dot stripped.
//
// It refuses, with code [CodeHostInvalid]: IP literals in any spelling
// (including names whose last label is numeric, such as "127.1" or
// "0x7f.1", which resolvers treat as IPv4), names that IDNA maps to an IP
// literal (such as "①②⑦.0.0.1"), empty names and empty labels, labels over
// 63 bytes, names over 253 bytes, wildcards and any character outside
// letters, digits and hyphen after mapping.
//
// CanonicalHost is idempotent: CanonicalHost(h) returns h for every h it
// returned.
func CanonicalHost(s string) (string, error) {
	h, why := canonicalHost(s)
	if why != "" {
		return "", checkfu.Refuse(CodeHostInvalid, "egress: host %s %s", checkfu.Quote(s), why)
	}
	return h, nil
}

// canonicalHost returns the canonical host or a reason it has none.
func canonicalHost(s string) (string, string) {
	if s == "" {
		return "", "is empty"
	}
	if len(s) > maxHostInput {
		return "", "is too long"
	}
	a, err := hostProfile.ToASCII(s)
	if err != nil {
		if _, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
			return "", "is an IP literal, not a DNS name"
		}
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < utf8.RuneSelf && c != '.' && c != '-' && !isAlnum(c) {
				return "", fmt.Sprintf("has the character %q, which host names cannot contain (letters, digits, hyphens and dots only)", c)
			}
		}
		return "", "is not a valid IDNA host name"
	}
	a = strings.TrimSuffix(a, ".")
	if why := checkDNSName(a); why != "" {
		if _, err := netip.ParseAddr(a); err == nil {
			return "", "is (or IDNA maps it to) an IP literal, not a DNS name"
		}
		return "", why
	}
	// The mapping must have reached a fixed point: what we return must be
	// what we would return for it.
	if again, err := hostProfile.ToASCII(a); err != nil || again != a {
		return "", "does not have a stable IDNA form"
	}
	return a, ""
}

// checkDNSName reports why the ASCII name a is not a canonical DNS host
// name, or "" when it is one: lower-case letters, digits and hyphens in
// labels of 1 to 63 bytes that neither start nor end with a hyphen, at
// most 253 bytes in all, no trailing dot, and a last label that is not
// numeric. The last rule is what keeps IP literals out: every IPv4
// spelling ("127.0.0.1", "127.1", "0x7f.1", "2130706433") ends in a
// numeric label, and IPv6 needs ':'. It allocates nothing.
func checkDNSName(a string) string {
	if a == "" {
		return "is empty"
	}
	if len(a) > 253 {
		return "is longer than 253 bytes"
	}
	start := 0
	for i := 0; i <= len(a); i++ {
		if i < len(a) && a[i] != '.' {
			c := a[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return "has a character outside lower-case letters, digits and hyphen"
			}
			continue
		}
		label := a[start:i]
		switch {
		case label == "":
			return "has an empty label"
		case len(label) > 63:
			return "has a label longer than 63 bytes"
		case label[0] == '-' || label[len(label)-1] == '-':
			return "has a label that starts or ends with a hyphen"
		}
		if i == len(a) && numericLabel(label) {
			return "ends in a numeric label, which resolvers read as an IPv4 address"
		}
		start = i + 1
	}
	return ""
}

// numericLabel reports whether label is a number in the forms IPv4 parsers
// accept for a part of an address: decimal, octal with a leading 0, or
// hexadecimal with a 0x prefix (including a bare "0x").
func numericLabel(label string) bool {
	if len(label) >= 2 && label[0] == '0' && (label[1] == 'x' || label[1] == 'X') {
		for i := 2; i < len(label); i++ {
			c := label[i]
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(label); i++ {
		if label[i] < '0' || label[i] > '9' {
			return false
		}
	}
	return true
}

// A Request is the canonical form of one outbound HTTP request: what
// [Rules.Decide] matches is what is dialled ([Request.Authority]) and what
// is sent as the Host header ([Request.URL]). Build one with
// [CanonicalRequest]; a hand-built Request is re-checked by Decide and can
// only be refused, never allowed beyond its canonical meaning.
type Request struct {
	// Scheme is "https" or "http".
	Scheme string
	// Host is the canonical host: the output of [CanonicalHost] for a DNS
	// name or, for an IP literal target, the text form of the
	// netip.Addr (no brackets, no zone). Rules never match an IP literal.
	Host string
	// Port is the explicit port, defaulted from the scheme (443, 80).
	Port uint16
	// Path is the escaped path. It starts with "/" and is in canonical
	// form (see [CanonicalRequest]).
	Path string
	// RawQuery is the escaped query without the "?".
	RawQuery string
	// Method is the request method, an upper-case token.
	Method string
	// Header holds the request headers, with canonical keys. It is a
	// copy: changing the original request's headers does not change it.
	Header http.Header
}

// Authority returns "host:port", the address to dial, with an IPv6 host
// in brackets.
func (r Request) Authority() string {
	port := strconv.FormatUint(uint64(r.Port), 10)
	if strings.IndexByte(r.Host, ':') >= 0 {
		return "[" + r.Host + "]:" + port
	}
	return r.Host + ":" + port
}

// URL returns the absolute URL to send. Its Host is the canonical host,
// followed by ":port" only when the port is not the scheme's default, so
// the Host header sent is the host matched and dialled.
func (r Request) URL() *url.URL {
	u := &url.URL{Scheme: r.Scheme, Host: r.hostHeader(), Path: r.Path, RawQuery: r.RawQuery}
	if p, err := url.PathUnescape(r.Path); err == nil {
		u.Path, u.RawPath = p, r.Path
	}
	return u
}

// hostHeader returns the Host to send: the canonical host, bracketed when
// IPv6, followed by ":port" only when the port is not the scheme's default.
func (r Request) hostHeader() string {
	switch {
	case r.Port != defaultPort(r.Scheme):
		return r.Authority()
	case strings.IndexByte(r.Host, ':') >= 0:
		return "[" + r.Host + "]"
	}
	return r.Host
}

// defaultPort returns the default port of an http or https scheme, or 0.
func defaultPort(scheme string) uint16 {
	switch scheme {
	case "https":
		return 443
	case "http":
		return 80
	}
	return 0
}

// CanonicalRequest returns the canonical form of r, an outbound request
// with an absolute URL (as built by http.NewRequest, or as received in
// absolute form by a proxy). It does no I/O.
//
// It refuses, with code [CodeRequestInvalid]: a nil request or URL, a
// scheme other than http or https, an opaque URL, userinfo, a fragment,
// an empty host, a host that is neither a canonicalisable DNS name nor an
// IP literal (an IPv6 literal must be bracketed and carry no zone), a
// port that is empty, not decimal, has a leading zero, or lies outside
// 1-65535, an r.Host that names another host or port than the URL, a
// method that is not an upper-case token, a path that is not canonical,
// a query with control characters, spaces, non-ASCII bytes or malformed
// escapes or with a "_method" parameter (a method override, like the
// denylisted override headers), header names that are not canonical tokens, header values
// with control characters, and trailers (which would escape the header
// allowlist).
//
// A canonical path starts with "/" and is made of segments separated by
// "/" in which every byte is an RFC 3986 unreserved or sub-delimiter
// character, ":" or "@", or a percent escape with upper-case hex digits
// that does not encode an unreserved character (those must be written
// literally), "/" or "\", a control character, an overlong UTF-8
// sequence (a second spelling of an ASCII byte), or "%" followed by the
// hex digits of "/", "\", "." or a control character (a second spelling
// to a stack that decodes twice). No segment is empty
// ("//"), and no segment is "." or "..", also before a ";" parameter
// ("..;x"). An empty path becomes "/". These rules leave exactly one
// spelling for each path, so that a path prefix matched on the escaped
// form means the same thing to the upstream server.
func CanonicalRequest(r *http.Request) (Request, error) {
	if r == nil || r.URL == nil {
		return Request{}, refuseRequest("egress: request has no URL")
	}
	u := r.URL
	scheme := u.Scheme
	if scheme != "https" && scheme != "http" {
		return Request{}, refuseRequest("egress: scheme %s is not http or https (the URL must be absolute)", checkfu.Quote(scheme))
	}
	if u.Opaque != "" {
		return Request{}, refuseRequest("egress: opaque URL (scheme:data without //host) is not allowed")
	}
	if u.User != nil {
		return Request{}, refuseRequest("egress: URL carries userinfo; send credentials through custody, never in the URL")
	}
	if u.Fragment != "" || u.RawFragment != "" {
		return Request{}, refuseRequest("egress: URL carries a fragment")
	}
	host, port, err := canonicalAuthority(u.Host, scheme)
	if err != nil {
		return Request{}, err
	}
	if r.Host != "" && r.Host != u.Host {
		h2, p2, err := canonicalAuthority(r.Host, scheme)
		if err != nil || h2 != host || p2 != port {
			return Request{}, refuseRequest("egress: Host %s does not name the URL's host %s", checkfu.Quote(r.Host), checkfu.Quote(u.Host))
		}
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	if !isUpperToken(method) {
		return Request{}, refuseRequest("egress: method %s is not an upper-case token", checkfu.Quote(method))
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if why := checkPath(path); why != "" {
		return Request{}, refuseRequest("egress: path %s", why)
	}
	if why := checkQuery(u.RawQuery); why != "" {
		return Request{}, refuseRequest("egress: query %s", why)
	}
	if len(r.Trailer) > 0 {
		return Request{}, refuseRequest("egress: request declares trailers, which the header allowlist cannot see")
	}
	header, err := canonicalHeader(r.Header)
	if err != nil {
		return Request{}, err
	}
	return Request{
		Scheme:   scheme,
		Host:     host,
		Port:     port,
		Path:     path,
		RawQuery: u.RawQuery,
		Method:   method,
		Header:   header,
	}, nil
}

// canonicalHeader returns a deep copy of h after checking that every name
// is a canonical token and no value holds a control character.
func canonicalHeader(h http.Header) (http.Header, error) {
	out := make(http.Header, len(h))
	for k, vs := range h {
		if !httpguts.ValidHeaderFieldName(k) || !isCanonicalHeaderKey(k) {
			return nil, refuseRequest("egress: header name %s is not a canonical token (want %s)", checkfu.Quote(k), checkfu.Quote(http.CanonicalHeaderKey(k)))
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return nil, refuseRequest("egress: header %s has a value with control characters", checkfu.Quote(k))
			}
		}
		out[k] = append([]string(nil), vs...)
	}
	return out, nil
}

// canonicalAuthority splits and canonicalises "host[:port]".
func canonicalAuthority(hostport, scheme string) (string, uint16, error) {
	host, portText, hasPort := hostport, "", false
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return "", 0, refuseRequest("egress: host %s has an unclosed '['", checkfu.Quote(hostport))
		}
		host, portText = hostport[1:end], hostport[end+1:]
		if portText != "" {
			if portText[0] != ':' {
				return "", 0, refuseRequest("egress: host %s has junk after ']'", checkfu.Quote(hostport))
			}
			portText, hasPort = portText[1:], true
		}
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", 0, refuseRequest("egress: %s is not a bracketed IPv6 address without a zone", checkfu.Quote(hostport))
		}
		host = a.String()
	} else {
		if i := strings.LastIndexByte(hostport, ':'); i >= 0 {
			host, portText, hasPort = hostport[:i], hostport[i+1:], true
		}
		if host == "" {
			return "", 0, refuseRequest("egress: URL has an empty host")
		}
		if strings.ContainsAny(host, ":[]") {
			return "", 0, refuseRequest("egress: host %s is ambiguous (an IPv6 literal must be bracketed)", checkfu.Quote(hostport))
		}
		if a, err := netip.ParseAddr(host); err == nil {
			host = a.String()
		} else {
			h, why := canonicalHost(host)
			if why != "" {
				return "", 0, checkfu.Refuse(CodeRequestInvalid, "egress: host %s %s", checkfu.Quote(host), why)
			}
			host = h
		}
	}
	port := defaultPort(scheme)
	if hasPort {
		p, ok := parsePort(portText)
		if !ok {
			return "", 0, refuseRequest("egress: port %s is not an integer from 1 to 65535 without leading zeros", checkfu.Quote(portText))
		}
		port = p
	}
	return host, port, nil
}

// parsePort parses a decimal port 1-65535 with no sign and no leading zero.
func parsePort(s string) (uint16, bool) {
	if s == "" || len(s) > 5 || s[0] == '0' {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if n > 65535 {
		return 0, false
	}
	return uint16(n), true
}

// checkPath reports why p is not a canonical escaped path, or "" when it
// is one (see CanonicalRequest). It allocates nothing.
func checkPath(p string) string {
	if p == "" || p[0] != '/' {
		return "does not start with \"/\""
	}
	if p == "/" {
		return ""
	}
	start := 1
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			c := p[i]
			if c == '%' {
				if i+2 >= len(p) || !isHex(p[i+1]) || !isHex(p[i+2]) {
					return "has a malformed percent escape"
				}
				if !upperHex(p[i+1]) || !upperHex(p[i+2]) {
					return "has a lower-case percent escape (write the hex digits in upper case)"
				}
				d := unhex(p[i+1])<<4 | unhex(p[i+2])
				switch {
				case d == '/' || d == '\\':
					return "has an encoded slash or backslash"
				case d < 0x20 || d == 0x7f:
					return "has an encoded control character"
				case isUnreserved(d):
					return "percent-encodes an unreserved character; write it literally"
				case d == '%' && doubleEncoded(p[i+3:]):
					return "has a double-encoded slash, backslash, dot or control character, which a stack that decodes twice reads as the character"
				case d == 0xC0 || d == 0xC1 || overlongLead(d, p[i+3:]):
					return "has an overlong UTF-8 escape, which lenient decoders read as an ASCII character such as '.' or '/'"
				}
				i += 2
				continue
			}
			if c == '\\' {
				return "has a backslash"
			}
			if !isPathChar(c) {
				return "has a character that must be percent-encoded"
			}
			continue
		}
		seg := p[start:i]
		if j := strings.IndexByte(seg, ';'); j >= 0 {
			seg = seg[:j]
		}
		switch {
		case i == start && i < len(p):
			return "has an empty segment"
		case seg == "." || seg == "..":
			return "has a dot segment"
		}
		start = i + 1
	}
	return ""
}

// doubleEncoded reports whether rest, the text after an escape of "%",
// begins with hex digits that encode (again, through any further escapes
// of "%") a slash, backslash, dot or control character, or the lead byte
// of an overlong sequence: "%252F" is "/" to a stack that decodes twice. Hex digits of either case count, as
// decoders accept both.
func doubleEncoded(rest string) bool {
	for len(rest) >= 2 && isHex(rest[0]) && isHex(rest[1]) {
		c := hexVal(rest[0])<<4 | hexVal(rest[1])
		switch {
		case c == '%':
			rest = rest[2:]
			continue
		case c == '/' || c == '\\' || c == '.' || c < 0x20 || c == 0x7f || c == 0xC0 || c == 0xC1:
			return true
		}
		return false
	}
	return false
}

// hexVal returns the value of the hex digit c, of either case.
func hexVal(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// overlongLead reports whether the escaped byte d, followed by rest, starts
// an overlong three- or four-byte UTF-8 sequence: 0xE0 before 0x80-0x9F, or
// 0xF0 before 0x80-0x8F. (0xC0 and 0xC1 start only overlong sequences.)
func overlongLead(d byte, rest string) bool {
	if d != 0xE0 && d != 0xF0 || len(rest) < 3 || rest[0] != '%' || !upperHex(rest[1]) || !upperHex(rest[2]) {
		return false
	}
	v := unhex(rest[1])<<4 | unhex(rest[2])
	return d == 0xE0 && v < 0xA0 || d == 0xF0 && v < 0x90
}

// checkQuery reports why q is not an acceptable escaped query, or "".
// It allocates nothing.
func checkQuery(q string) string {
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c <= ' ' || c >= 0x7f:
			return "has a space, control or non-ASCII byte"
		case c == '#':
			return "has a '#'"
		case c == '%':
			if i+2 >= len(q) || !isHex(q[i+1]) || !isHex(q[i+2]) {
				return "has a malformed percent escape"
			}
			i += 2
		}
	}
	for rest := q; rest != ""; {
		param := rest
		if i := strings.IndexAny(rest, "&;"); i >= 0 {
			param, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		name, _, _ := strings.Cut(param, "=")
		if overridesMethod(name) {
			return "has a _method parameter, which frameworks read as a method override"
		}
	}
	return ""
}

// overridesMethod reports whether the escaped query parameter name is
// "_method" as frameworks that take the method from it read it: decoded,
// any case, and with PHP's rewriting of names (leading spaces dropped, a
// leading "." or " " or "[" read as "_", a "[" starting an array, an
// escaped NUL ending the name). It allocates nothing.
func overridesMethod(name string) bool {
	var buf [16]byte
	n := 0
	for i := 0; i < len(name) && n < len(buf); i++ {
		c := name[i]
		switch {
		case c == '%' && i+2 < len(name) && isHex(name[i+1]) && isHex(name[i+2]):
			c = hexVal(name[i+1])<<4 | hexVal(name[i+2])
			i += 2
		case c == '+':
			c = ' '
		}
		if c == 0 {
			break // PHP reads a name up to a NUL
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if n == 0 && c == ' ' {
			continue // PHP drops leading spaces
		}
		if n == 0 && (c == '.' || c == '[') {
			c = '_'
		}
		buf[n] = c
		n++
	}
	const m = "_method"
	return (n == len(m) || n > len(m) && buf[len(m)] == '[') && string(buf[:len(m)]) == m
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// isPathChar reports whether c may appear literally in a path segment:
// unreserved, sub-delims, ':' or '@' (RFC 3986 pchar without escapes).
func isPathChar(c byte) bool {
	if isUnreserved(c) {
		return true
	}
	switch c {
	case '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=', ':', '@':
		return true
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func upperHex(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'A' + 10
}

// isTokenChar reports whether c is an RFC 9110 tchar.
func isTokenChar(c byte) bool {
	if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// isUpperToken reports whether s is a non-empty token without lower-case
// letters.
func isUpperToken(s string) bool {
	if s == "" || len(s) > maxMethodLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenChar(s[i]) || 'a' <= s[i] && s[i] <= 'z' {
			return false
		}
	}
	return true
}

// isCanonicalHeaderKey reports whether k is a token already in the form
// http.CanonicalHeaderKey gives it: the first letter and every letter after
// a hyphen upper-case, every other letter lower-case. It allocates nothing.
func isCanonicalHeaderKey(k string) bool {
	if k == "" {
		return false
	}
	upper := true
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !isTokenChar(c) {
			return false
		}
		if upper && 'a' <= c && c <= 'z' || !upper && 'A' <= c && c <= 'Z' {
			return false
		}
		upper = c == '-'
	}
	return true
}

// maxMethodLen bounds a method token.
const maxMethodLen = 32

func refuseRequest(format string, args ...any) error {
	return checkfu.Refuse(CodeRequestInvalid, format, args...)
}
