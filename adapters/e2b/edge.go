package e2b

import "net/http"

// An Edge is the outbound edge of the adapter: it sends a request the
// adapter built with the plane credential attached. The Runner
// implements it over custody (package adapters never imports custody):
// it resolves handle to the credential at send time, sets it on a copy
// of req in the header named header (value prefix + secret), sends the
// copy, and returns the response with resp.Request set back to req, so
// that no value the adapter can reach carries the secret.
// It sends that one request and follows no redirect: net/http's Client
// would copy a custom header such as E2B's X-API-Key to whatever host
// a redirect names, so the adapter sees a 3xx and refuses it.
//
// The adapter holds only the handle, an opaque name. It never sees the
// key's bytes, and nothing it returns, logs or formats can contain
// them. docs/providers-vendors.md describes the seam.
//
// The signature uses only standard types, so one Runner type satisfies
// the Edge of every vendor adapter.
type Edge interface {
	Send(req *http.Request, handle, header, prefix string) (*http.Response, error)
}

// apiKeyHeader is how E2B's control plane takes the API key
// (securitySchemes.ApiKeyAuth in spec/openapi.yml).
const apiKeyHeader = "X-API-Key"
