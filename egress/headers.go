package egress

import "strings"

// deniedHeaders is the fixed header denylist, by canonical name. A header
// here is refused on every request and in every rule: no allowlist can
// name it and no option removes it. The groups say why each is here.
var deniedHeaders = map[string]struct{}{
	// Routing: what host, scheme or path the upstream thinks it serves.
	"Host":                     {},
	"Forwarded":                {},
	"Via":                      {},
	"X-Real-Ip":                {},
	"X-Original-Url":           {},
	"X-Rewrite-Url":            {},
	"X-Original-Host":          {},
	"X-Host":                   {},
	"X-Client-Ip":              {},
	"True-Client-Ip":           {},
	"Client-Ip":                {},
	"X-Cluster-Client-Ip":      {},
	"Max-Forwards":             {},
	"X-Original-Forwarded-For": {},
	"X-Remote-Ip":              {},
	"X-Remote-Addr":            {},
	"X-Originating-Ip":         {},
	"X-Scheme":                 {},
	"X-Url-Scheme":             {},
	"Front-End-Https":          {},
	// Authorization: the credential is attached by custody, outside the
	// sandbox, never supplied by the caller.
	"Authorization":       {},
	"Proxy-Authorization": {},
	"Cookie":              {},
	"Cookie2":             {},
	// Framework-internal: Next.js trusts it to skip its middleware
	// (CVE-2025-29927), which is where such apps check authorization.
	"X-Middleware-Subrequest": {},
	// httpoxy: a bare Proxy header becomes HTTP_PROXY in CGI upstreams.
	"Proxy": {},
	// Method override: would change the method the rule matched.
	"X-Http-Method-Override": {},
	"X-Http-Method":          {},
	"X-Method-Override":      {},
	// Hop-by-hop and framing: belong to the connection, not the request.
	"Connection":         {},
	"Keep-Alive":         {},
	"Te":                 {},
	"Trailer":            {},
	"Transfer-Encoding":  {},
	"Upgrade":            {},
	"Proxy-Connection":   {},
	"Proxy-Authenticate": {},
	"Http2-Settings":     {},
	// Cloud metadata enablers: the headers instance-metadata services
	// require, so that a request reaching one is refused outright.
	"Metadata-Flavor":           {},
	"Metadata":                  {},
	"X-Google-Metadata-Request": {},
}

// deniedHeaderPrefixes are canonical name prefixes on the denylist.
var deniedHeaderPrefixes = [...]string{
	"X-Forwarded-",                // X-Forwarded-For, -Host, -Proto, -Port, -Prefix, ...
	"Proxy-",                      // every header addressed to a proxy
	"X-Envoy-",                    // Envoy's internal routing headers (original-dst host, ...)
	"X-Aws-Ec2-Metadata-Token",    // the token and -Ttl-Seconds
	"X-Aliyun-Ecs-Metadata-Token", // and its -Ttl-Seconds
}

// deniedPrefixStarts marks the first bytes of deniedHeaderPrefixes, so
// that most names skip the prefix loop.
var deniedPrefixStarts = func() (t [256]bool) {
	for _, p := range deniedHeaderPrefixes {
		t[p[0]] = true
	}
	return t
}()

// HeaderDenied reports whether the header name is on the fixed denylist.
// The check is case-insensitive, and every name containing an underscore
// is denied (some servers and CGI gateways treat "X_Forwarded_For" as
// "X-Forwarded-For"). Names outside the denylist are still only sent when
// the matched rule lists them.
//
// The denylist: Host, Forwarded, Via, X-Forwarded-*, X-Real-IP and the
// other client-address, scheme and URL-rewrite headers (X-Original-URL,
// X-Rewrite-URL, X-Original-Host, X-Host, X-Client-IP, True-Client-IP,
// Client-IP, X-Cluster-Client-IP, X-Original-Forwarded-For, X-Remote-IP,
// X-Remote-Addr, X-Originating-IP, X-Scheme, X-Url-Scheme,
// Front-End-Https), X-Envoy-*, Max-Forwards; Authorization, Cookie,
// Cookie2, X-Middleware-Subrequest; Proxy and Proxy-* (including
// Proxy-Authorization and Proxy-Connection); X-HTTP-Method-Override,
// X-HTTP-Method, X-Method-Override; Connection, Keep-Alive, TE, Trailer,
// Transfer-Encoding, Upgrade, HTTP2-Settings; Metadata-Flavor, Metadata,
// X-Google-Metadata-Request, X-aws-ec2-metadata-token*,
// X-aliyun-ecs-metadata-token*.
func HeaderDenied(name string) bool {
	if isCanonicalHeaderKey(name) {
		return canonicalHeaderDenied(name)
	}
	return canonicalHeaderDenied(canonicalHeaderName(name))
}

// canonicalHeaderDenied is HeaderDenied for a name in canonical form. It
// allocates nothing.
func canonicalHeaderDenied(name string) bool {
	if name == "" {
		return false
	}
	if strings.IndexByte(name, '_') >= 0 {
		return true
	}
	if maybeDenied(name) {
		if _, ok := deniedHeaders[name]; ok {
			return true
		}
	}
	if deniedPrefixStarts[name[0]] {
		for _, p := range deniedHeaderPrefixes {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
	}
	return false
}

// deniedShapes has bit n of entry c set when some denylisted name starts
// with byte c and is n bytes long (n < 64). It is a pre-filter that spares
// most allowed names the map lookup.
var deniedShapes = func() (t [256]uint64) {
	for name := range deniedHeaders {
		t[name[0]] |= 1 << min(len(name), 63)
	}
	return t
}()

// maybeDenied reports whether name has the first byte and length of some
// denylisted name (names of 63 bytes or more always do).
func maybeDenied(name string) bool {
	return deniedShapes[name[0]]&(1<<min(len(name), 63)) != 0
}

// canonicalHeaderName canonicalises the case of name the way
// http.CanonicalHeaderKey does, also for names with bytes outside a token
// (which http.CanonicalHeaderKey returns unchanged), so that the denylist
// can never be dodged by spelling.
func canonicalHeaderName(name string) string {
	b := []byte(name)
	upper := true
	for i, c := range b {
		if upper && 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		} else if !upper && 'A' <= c && c <= 'Z' {
			b[i] = c - 'A' + 'a'
		}
		upper = c == '-'
	}
	return string(b)
}
