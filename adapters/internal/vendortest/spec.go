package vendortest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// Scheme is the one kind of security scheme a vendor's document uses.
type Scheme int

const (
	// APIKeyHeader is an apiKey scheme in a header (E2B).
	APIKeyHeader Scheme = iota
	// Bearer is an http bearer scheme in Authorization (Daytona, Vercel).
	Bearer
)

// A Spec validates every request a fake receives against one of the
// OpenAPI documents in a vendor's testdata (written from the vendor's
// published definitions; see each testdata/README.md).
type Spec struct {
	doc    *openapi3.T
	router routers.Router
	scheme Scheme
}

// AcceptConnectJSON lets request bodies of type application/connect+json
// through body validation (E2B's envd speaks Connect).
func AcceptConnectJSON() {
	openapi3filter.RegisterBodyDecoder("application/connect+json", openapi3filter.FileBodyDecoder)
}

// LoadSpec loads and validates the OpenAPI document at path; the test
// fails if it cannot. Requests are routed on the path alone.
func LoadSpec(t testing.TB, path string, scheme Scheme) *Spec {
	t.Helper()
	useByteFormat()
	doc, err := openapi3.NewLoader().LoadFromFile(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("%s is not a valid OpenAPI document: %v", path, err)
	}
	doc.Servers = nil // route on the path alone: the fake's host is loopback
	r, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &Spec{doc: doc, router: r, scheme: scheme}
}

// Check validates req (its body is restored for the handler) and returns
// the operation's route, or an error describing the deviation. auth checks
// the credential a security scheme names.
func (s *Spec) Check(req *http.Request, auth func(scheme, value string) error) (*routers.Route, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	route, params, err := s.router.FindRoute(req)
	if err != nil {
		return nil, err
	}
	in := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{
			AuthenticationFunc: func(_ context.Context, ai *openapi3filter.AuthenticationInput) error {
				ss := ai.SecurityScheme
				h := ai.RequestValidationInput.Request.Header
				switch s.scheme {
				case APIKeyHeader:
					if ss.Type != "apiKey" || ss.In != "header" {
						return errors.New("unsupported scheme")
					}
					return auth(ai.SecuritySchemeName, h.Get(ss.Name))
				default:
					if ss.Type != "http" || ss.Scheme != "bearer" {
						return errors.New("unsupported scheme")
					}
					v, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
					if !ok {
						return errors.New("no bearer token")
					}
					return auth(ai.SecuritySchemeName, v)
				}
			},
		},
	}
	err = openapi3filter.ValidateRequest(context.Background(), in)
	req.Body = io.NopCloser(bytes.NewReader(body))
	return route, err
}

// Schema validates a decoded JSON value against a named component.
func (s *Spec) Schema(name string, v any) error {
	ref, ok := s.doc.Components.Schemas[name]
	if !ok {
		return errors.New("no schema " + name)
	}
	return ref.Value.VisitJSON(v)
}
