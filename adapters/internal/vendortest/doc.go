// Package vendortest is the test support shared by the vendor adapters
// (adapters/e2b, adapters/daytona, adapters/vercel): a credential-seam
// double ([Edge]), a reflective secret search ([Holds]), an OpenAPI
// request validator ([Spec]), the identity test body ([CheckIdentities])
// and a network-namespace runner ([Isolate], [NetnsMain]).
//
// Invariants:
//   - It is imported only from _test.go files of packages under adapters/
//     (Go's internal rule keeps it out of everything else); production code
//     never imports it, so kin-openapi, which it imports, never reaches a
//     production binary.
//   - [Edge] resolves a handle to a key only at send time and sets it on a
//     copy of the request; the caller's request never carries the key.
//   - [Holds] never walks an [Edge] or the standard library's HTTP
//     machinery, so a positive answer always means the adapter's own state
//     reached the canary.
package vendortest
