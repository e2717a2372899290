package egress

import (
	"errors"
	"fmt"
)

// An UpstreamCode names why a request that policy permitted failed on the
// way to, or at, its destination. It is a different type from
// [checkfu.Code] on purpose: errors.Is(err, CodeUpstreamConnectFailed)
// never matches a refusal, and errors.Is(err, CodeDestinationNotPublic)
// never matches an upstream failure.
type UpstreamCode string

// Error returns the code itself, so that a code can be the target of
// errors.Is.
func (c UpstreamCode) Error() string { return string(c) }

// An UpstreamError reports an upstream failure: the request was permitted
// and attempted, and the network or the destination failed it. It is never
// a [*checkfu.Refusal], and no Refusal is ever an UpstreamError.
//
// Its text names the destination as "host:port" only: never a path, a
// query, userinfo or a header, so no credential can reach it.
type UpstreamError struct {
	// Code says which kind of failure this is.
	Code UpstreamCode
	// Target is the "host:port" that was being reached.
	Target string
	// Err is the underlying network error.
	Err error
}

// Error returns "egress: CODE: TARGET: CAUSE".
func (e *UpstreamError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("egress: %s: %s", e.Code, e.Target)
	}
	return fmt.Sprintf("egress: %s: %s: %v", e.Code, e.Target, e.Err)
}

// Unwrap returns the underlying network error.
func (e *UpstreamError) Unwrap() error { return e.Err }

// Is reports whether target is e's UpstreamCode.
func (e *UpstreamError) Is(target error) bool {
	c, ok := target.(UpstreamCode)
	return ok && c == e.Code
}

// UpstreamCodeOf returns the code of the first [*UpstreamError] in err's
// chain, and false when err holds none.
func UpstreamCodeOf(err error) (UpstreamCode, bool) {
	var ue *UpstreamError
	if errors.As(err, &ue) {
		return ue.Code, true
	}
	return "", false
}
