package vendorkit

import "net/url"

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
	if h := u.Hostname(); u.Scheme == "http" && (h == "127.0.0.1" || h == "::1" || h == "localhost") {
		return BaseURLOK
	}
	return BaseURLPlain
}
