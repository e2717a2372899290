package vendorkit

import (
	"net/netip"
	"net/url"
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
)

// The answers of [BaseURLProblem].
const (
	// BaseURLOK: s is an https base URL, or http to loopback.
	BaseURLOK = iota
	// BaseURLMalformed: s does not parse, names no host, or carries user
	// information, a query or a fragment.
	BaseURLMalformed
	// BaseURLPlain: s is well formed but neither https nor http to
	// loopback, so requests would leave in the clear.
	BaseURLPlain
)

// BaseURLProblem says whether s may be a vendor's base URL: it admits
// https, and http only to 127.0.0.1, ::1 or localhost (a test's fake).
// The caller words the refusal.
func BaseURLProblem(s string) int {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return BaseURLMalformed
	}
	if u.Scheme == "https" {
		return BaseURLOK
	}
	if u.Scheme == "http" && LoopbackHost(u.Hostname()) {
		return BaseURLOK
	}
	return BaseURLPlain
}

// LoopbackHost reports whether h, a URL's host name without its port,
// is one of the loopback names a test's fake listens on: 127.0.0.1, ::1
// or localhost.
func LoopbackHost(h string) bool { return h == "127.0.0.1" || h == "::1" || h == "localhost" }

// PublicHost reports whether h, a URL's host name without its port, is
// one a vendor's answer may send the Runner to with a credential: an
// address literal only if it is public ([egress.IsPublic]), and
// otherwise a DNS name of letters, digits, hyphens and dots that is not
// localhost or under .localhost and whose last label does not begin
// with a digit (no top-level domain does; resolvers read such a name,
// 127.1 or 2130706433, as an address). It judges the name only: what a
// public name resolves to is the Edge's to check when it dials.
func PublicHost(h string) bool {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if a, err := netip.ParseAddr(h); err == nil {
		return egress.IsPublic(a)
	}
	if h == "" || h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	last := h[strings.LastIndexByte(h, '.')+1:]
	return last != "" && (last[0] < '0' || last[0] > '9')
}

// CheckBaseURL refuses with checkfu.CodeConfigInvalid a base URL
// [BaseURLProblem] does not admit, in vendor's words: "<vendor>: <url>
// is not a base URL" when it is malformed, "... is not https" when it
// would send requests in the clear.
func CheckBaseURL(vendor, s string) error {
	switch BaseURLProblem(s) {
	case BaseURLMalformed:
		return checkfu.Refuse(checkfu.CodeConfigInvalid, "%s: %s is not a base URL", vendor, checkfu.Quote(s))
	case BaseURLPlain:
		return checkfu.Refuse(checkfu.CodeConfigInvalid, "%s: %s is not https", vendor, checkfu.Quote(s))
	}
	return nil
}

// MaxVendorID is the longest name of a sandbox or session a vendor's
// answer may give; a longer one is refused, not truncated.
const MaxVendorID = 128

// pathUnsafe are the bytes a vendor's name may not hold, because it is
// spliced into a URL path: a separator, a query or fragment, an escape,
// user information, a port or a space.
const pathUnsafe = "/?#%@: "

// PathSafeID reports whether id, a name a vendor's answer gave, may be
// spliced into a URL: not empty, at most [MaxVendorID] bytes, printable
// ASCII only, with none of / ? # % @ : or space, and none of the bytes in
// extra (what a vendor's own use of the name forbids besides, such as "."
// for a name that becomes one DNS label). Printable only, because the
// name comes back decoded in a request's path and goes into evidence:
// a control character in it would reach a terminal.
func PathSafeID(id, extra string) bool {
	return id != "" && len(id) <= MaxVendorID && printableASCII(id) && !strings.ContainsAny(id, pathUnsafe+extra)
}

// printableASCII reports whether s holds only bytes from '!' to '~'.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
