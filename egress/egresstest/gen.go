package egresstest

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/checkfu/checkfu/egress"
	"golang.org/x/net/publicsuffix"
	"pgregory.net/rapid"
)

// tlds are top-level labels the generators end names with. None is a
// public suffix of more than one label, so "*.label.tld" is always a
// wildcard NewRules accepts.
var tlds = []string{"com", "org", "net", "example", "test", "io", "dev"}

// idnHosts pairs IDN U-label spellings with their canonical A-label form.
var idnHosts = [][2]string{
	{"bücher.example", "xn--bcher-kva.example"},
	{"ｅｘａｍｐｌｅ.com", "example.com"},
	{"пример.test", "xn--e1afmkfd.test"},
	{"例え.jp", "xn--r8jz45g.jp"},
	{"straße.de", "xn--strae-oqa.de"}, // non-transitional: ß is kept
}

// Label generates one canonical DNS label: lower-case letters, digits and
// single hyphens inside, 1 to 20 bytes, never all digits.
func Label() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		s := rapid.StringMatching(`[a-z0-9]([a-z0-9]|-[a-z0-9]){0,9}`).Draw(t, "label")
		if strings.Trim(s, "0123456789") == "" {
			s = "n" + s
		}
		if strings.HasPrefix(s, "xn-") {
			s = "x" + s
		}
		return s
	})
}

// Host generates a canonical host name (the output of egress.CanonicalHost)
// of two to four labels.
func Host() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		n := rapid.IntRange(1, 3).Draw(t, "labels")
		labels := make([]string, 0, n+1)
		for i := 0; i < n; i++ {
			labels = append(labels, Label().Draw(t, "label"))
		}
		labels = append(labels, rapid.SampledFrom(tlds).Draw(t, "tld"))
		return strings.Join(labels, ".")
	})
}

// Spelling generates a non-canonical spelling of the canonical host h that
// egress.CanonicalHost maps back to h: mixed case, full-width letters and
// digits, soft hyphens, ideographic full stops and one trailing dot.
func Spelling(h string) *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		var b strings.Builder
		for i, r := range h {
			switch rapid.IntRange(0, 9).Draw(t, "spell") {
			case 0, 1:
				b.WriteString(strings.ToUpper(string(r)))
			case 2:
				if r >= '!' && r <= '~' {
					r += 0xFF01 - '!' // full-width form
				}
				b.WriteRune(r)
			case 3:
				if r == '.' {
					b.WriteRune('\u3002')
				} else {
					b.WriteRune(r)
				}
			case 4:
				b.WriteRune(r)
				if i+1 < len(h) && h[i+1] != '.' && r != '.' {
					b.WriteRune('\u00ad') // soft hyphen, mapped away
				}
			default:
				b.WriteRune(r)
			}
		}
		if rapid.Bool().Draw(t, "trailing dot") {
			b.WriteByte('.')
		}
		return b.String()
	})
}

// HostInput generates hostile host-name input for a canonicaliser: valid
// names in odd spellings, IDN names, IP literals in every spelling
// resolvers accept (dotted, short, octal, hex, integer, full-width,
// circled digits), names with empty labels, wildcards, ports, userinfo,
// underscores, control characters and arbitrary Unicode.
func HostInput() *rapid.Generator[string] {
	ipForms := []string{
		"127.0.0.1", "127.1", "0177.0.0.1", "0x7f.0.0.1", "0x7f.1", "2130706433", "017700000001",
		"①②⑦.0.0.1", "１２７.０.０.１", "127。0。0。1", "169.254.169.254", "0251.0376.0251.0376",
		"::1", "[::1]", "[::ffff:127.0.0.1]", "fe80::1%eth0", "0", "0x0", "1.2.3.0x4", "example.0x7f", "example.123",
	}
	return rapid.OneOf(
		Host(),
		rapid.Custom(func(t *rapid.T) string { return Spelling(Host().Draw(t, "host")).Draw(t, "spelling") }),
		rapid.Custom(func(t *rapid.T) string { return rapid.SampledFrom(idnHosts).Draw(t, "idn")[0] }),
		rapid.SampledFrom(ipForms),
		rapid.Custom(func(t *rapid.T) string {
			h := Host().Draw(t, "host")
			junk := rapid.SampledFrom([]string{"..", "*.", ":443", "@evil.com", "_", " ", "\x00", "\t", "/", "\\", "%2e", "[", "]", "-", "."}).Draw(t, "junk")
			at := rapid.IntRange(0, len(h)).Draw(t, "at")
			return h[:at] + junk + h[at:]
		}),
		rapid.String(),
		rapid.StringMatching(`[a-zA-Z0-9\-\.\x{00ad}\x{200b}\x{3002}\x{ff0e}\x{2460}-\x{2473}\x{ff10}-\x{ff19}]{0,30}`),
	)
}

// WildcardBase generates a canonical name of two labels that is not a
// public suffix, so that "*." followed by it is a wildcard NewRules
// accepts.
func WildcardBase() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		return Label().Draw(t, "label") + "." + rapid.SampledFrom(tlds).Draw(t, "tld")
	}).Filter(func(s string) bool {
		ps, _ := publicsuffix.PublicSuffix(s)
		return ps != s
	})
}

// Method generates a method token in varied case.
func Method() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.SampledFrom([]string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}),
		rapid.SampledFrom([]string{"get", "Post", "pUT"}),
		rapid.StringMatching(`[A-Z]{1,8}`),
	)
}

// HeaderName generates a canonical request header name that is not on
// the fixed denylist.
func HeaderName() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.SampledFrom([]string{"Accept", "Accept-Language", "Content-Type", "User-Agent", "If-None-Match", "X-Request-Id", "X-Trace", "Idempotency-Key"}),
		rapid.Map(rapid.StringMatching(`X-[A-Z][a-z0-9]{0,8}`), http.CanonicalHeaderKey),
	).Filter(func(s string) bool { return !egress.HeaderDenied(s) })
}

// DeniedHeaders lists, in canonical form, representative names from every
// group of the fixed denylist: a request carrying any of them is refused
// whatever the rules say.
var DeniedHeaders = []string{
	"Host", "Authorization", "Proxy-Authorization", "Proxy", "Cookie", "Forwarded",
	"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Real-Ip",
	"X-Http-Method-Override", "X-Http-Method", "X-Method-Override",
	"Connection", "Keep-Alive", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Proxy-Connection",
	"Metadata-Flavor", "Metadata", "X-Aws-Ec2-Metadata-Token", "X-Aws-Ec2-Metadata-Token-Ttl-Seconds",
	"X-Google-Metadata-Request", "X_forwarded_for", "X_api_key",
}

// DeniedHeader generates a name from [DeniedHeaders].
func DeniedHeader() *rapid.Generator[string] { return rapid.SampledFrom(DeniedHeaders) }

// Segment generates one canonical escaped path segment: never empty,
// never "." or "..", also before a ';', and no "%25" before hex digits
// (which could spell a double-encoded "/", "\" or ".").
func Segment() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		s := rapid.StringMatching(`([a-zA-Z0-9\-._~!$&'()*+,;=:@]|%20|%25~|%C3%A9|%2C|%3F){1,10}`).Draw(t, "segment")
		if before, _, _ := strings.Cut(s, ";"); before == "" || before == "." || before == ".." {
			s = "s" + s
		}
		return s
	})
}

// Path generates a canonical escaped path of zero to four segments.
func Path() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		segs := rapid.SliceOfN(Segment(), 0, 4).Draw(t, "segments")
		return "/" + strings.Join(segs, "/")
	})
}

// Query generates an escaped query string (without the "?"), often empty.
func Query() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.Just(""),
		rapid.StringMatching(`[a-z0-9]{1,5}=[a-zA-Z0-9._~-]{0,8}(&[a-z0-9]{1,5}=([a-zA-Z0-9._~-]|%2F|%20|%C3%A9){0,8}){0,3}`),
	)
}

// PathPrefix generates a path prefix NewRules accepts: "/", or a canonical
// path without a trailing slash.
func PathPrefix() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		segs := rapid.SliceOfN(Segment(), 0, 2).Draw(t, "segments")
		return "/" + strings.Join(segs, "/")
	})
}

// Rule generates a rule NewRules accepts, in a varied but valid spelling:
// exact or wildcard host (IDN spellings included), a port, a path prefix,
// one to three methods and zero to four allowed headers.
func Rule() *rapid.Generator[egress.Rule] {
	return rapid.Custom(func(t *rapid.T) egress.Rule {
		var host string
		switch rapid.IntRange(0, 5).Draw(t, "host kind") {
		case 0:
			host = "*." + WildcardBase().Draw(t, "base")
		case 1:
			host = rapid.SampledFrom(idnHosts[:4]).Draw(t, "idn")[0]
		case 2:
			host = Spelling(Host().Draw(t, "host")).Draw(t, "spelling")
		default:
			host = Host().Draw(t, "host")
		}
		methods := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"GET", "POST", "PUT", "DELETE", "HEAD", "get", "patch"}), 1, 3,
			strings.ToUpper).Draw(t, "methods")
		headers := rapid.SliceOfNDistinct(HeaderName(), 0, 4, http.CanonicalHeaderKey).Draw(t, "headers")
		prefix := ""
		switch rapid.IntRange(0, 3).Draw(t, "prefix kind") {
		case 0:
		case 1:
			prefix = "/"
		default:
			prefix = "/" + Segment().Draw(t, "prefix segment")
			if rapid.Bool().Draw(t, "two segments") {
				prefix += "/" + Segment().Draw(t, "prefix segment")
			}
		}
		return egress.Rule{
			Host:       host,
			Port:       rapid.SampledFrom([]uint16{443, 443, 80, 8443, 1, 65535}).Draw(t, "port"),
			PathPrefix: prefix,
			Methods:    methods,
			Headers:    headers,
		}
	})
}

// Rules generates 1 to n (at most egress.MaxRules) distinct rules and
// returns them parsed.
func Rules(n int) *rapid.Generator[*egress.Rules] {
	n = min(max(n, 1), egress.MaxRules)
	return rapid.Custom(func(t *rapid.T) *egress.Rules {
		rules := rapid.SliceOfNDistinct(Rule(), 1, n, ruleKey).Draw(t, "rules")
		rs, err := egress.NewRules(rules)
		if err != nil {
			t.Fatalf("egresstest: generated rules refused: %v", err)
		}
		return rs
	})
}

// ruleKey is the canonical identity of a rule, for distinctness.
func ruleKey(r egress.Rule) string {
	rs, err := egress.NewRules([]egress.Rule{r})
	if err != nil {
		return "invalid"
	}
	b, _ := rs.MarshalJSON()
	return string(b)
}

// Request generates a canonical request aimed at rs: most requests are
// derived from one of its rules (the exact host or a name under a
// wildcard, the rule's port, a path under its prefix, one of its methods,
// a subset of its headers) and then perturbed, so that every outcome of a
// decision is common. rs may be nil for requests aimed at nothing.
func Request(rs *egress.Rules) *rapid.Generator[*egress.Request] {
	return rapid.Custom(func(t *rapid.T) *egress.Request {
		scheme := "https"
		host := Host().Draw(t, "host")
		port := uint16(443)
		path := Path().Draw(t, "path")
		method := "GET"
		var headers []string
		if rs.Len() > 0 && rapid.IntRange(0, 9).Draw(t, "aimed") > 0 {
			r := rs.Rule(rapid.IntRange(0, rs.Len()-1).Draw(t, "rule"))
			host = r.Host
			if rest, ok := strings.CutPrefix(r.Host, "*."); ok {
				switch rapid.IntRange(0, 5).Draw(t, "wildcard") {
				case 0:
					host = rest // the apex
				case 1:
					host = Label().Draw(t, "l1") + "." + Label().Draw(t, "l2") + "." + rest
				default:
					host = Label().Draw(t, "label") + "." + rest
				}
			}
			port = r.Port
			path = r.PathPrefix
			if rapid.Bool().Draw(t, "deeper") {
				path = strings.TrimSuffix(path, "/") + "/" + Segment().Draw(t, "seg")
			}
			method = rapid.SampledFrom(r.Methods).Draw(t, "method")
			if len(r.Headers) > 0 {
				headers = rapid.SliceOfNDistinct(rapid.SampledFrom(r.Headers), 0, len(r.Headers), rapid.ID[string]).Draw(t, "headers")
			}
			switch rapid.IntRange(0, 11).Draw(t, "perturb") {
			case 0:
				port++
				if port == 0 {
					port = 1
				}
			case 1:
				method = Method().Filter(isUpper).Draw(t, "other method")
			case 2:
				headers = append(headers, HeaderName().Draw(t, "extra header"))
			case 3:
				path = path + Segment().Draw(t, "glued") // "/v1" -> "/v1x": off the segment boundary
			case 4:
				path = Path().Draw(t, "other path")
			case 5:
				host = "x" + host
			case 6:
				scheme = "http"
			}
		} else {
			method = Method().Filter(isUpper).Draw(t, "method")
			headers = rapid.SliceOfN(HeaderName(), 0, 3).Draw(t, "headers")
		}
		if port == defaultPort(scheme) {
			port = 0 // let the canonicaliser default it
		}
		return canonical(t, scheme, host, port, path, method, headers)
	})
}

func isUpper(s string) bool { return strings.ToUpper(s) == s }

func defaultPort(scheme string) uint16 {
	if scheme == "http" {
		return 80
	}
	return 443
}

// canonical builds the request through egress.CanonicalRequest, the same
// path production requests take.
func canonical(t *rapid.T, scheme, host string, port uint16, path, method string, headers []string) *egress.Request {
	authority := host
	if port != 0 {
		authority = host + ":" + itoa(int(port))
	}
	u := &url.URL{Scheme: scheme, Host: authority, RawPath: path, RawQuery: Query().Draw(t, "query")}
	p, err := url.PathUnescape(path)
	if err != nil {
		t.Fatalf("egresstest: generated path %q: %v", path, err)
	}
	u.Path = p
	hr := &http.Request{Method: method, URL: u, Host: authority, Header: http.Header{}}
	for _, h := range headers {
		hr.Header.Set(h, "v")
	}
	req, err := egress.CanonicalRequest(hr)
	if err != nil {
		t.Fatalf("egresstest: generated request %s %s is not canonical: %v", method, u, err)
	}
	return &req
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [8]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
