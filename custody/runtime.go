package custody

import "context"

// A Custodian hands the outbound edge the credential for a binding, as a
// Secret, for one request. The edge reveals it only inside the egress
// client's attach hook, after the Connection's rules allowed the request,
// and destroys it when the request is done.
//
// [*Native] is the Custodian of native custody (records sealed in
// Checkfu's own store); an [IntegrationRuntime] is the Custodian of
// runtime-backed custody.
type Custodian interface {
	// Open returns the credential for b. It refuses an unknown binding
	// with [CodeRecordNotFound]; the caller destroys the Secret after use.
	Open(ctx context.Context, b Binding) (*Secret, error)
}

var _ Custodian = (*Native)(nil)

// An IntegrationRuntime is runtime-backed custody: an adapter that keeps
// its own encrypted records and refresh machinery on its side. Credential
// bytes cross only the adapter and the outbound edge that makes the
// provider request: Open returns a Secret, never bytes, and the adapter's
// own provider exchanges (such as a token refresh) go through the egress
// client like every other credentialed request.
//
// Implementations must be safe for concurrent use, must return a fresh
// Secret from each Open (the caller destroys it), must refresh an expired
// credential before returning it, and must refresh at most once for
// concurrent Opens of one binding. The package custodytest holds the
// conformance suite (TestRuntime). [TokenRuntime] is the reference
// implementation.
type IntegrationRuntime interface {
	Custodian
	// Invalidate reports that the provider rejected the credential for b
	// (HTTP 401): the next Open must refresh it first. Invalidating an
	// unknown binding is refused with [CodeRecordNotFound].
	Invalidate(ctx context.Context, b Binding) error
}
