package daytona_test

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

// A spec validates every request a fake receives against one of the
// OpenAPI documents in testdata (written from the vendor's published
// definitions; see testdata/README.md).
type spec struct {
	doc    *openapi3.T
	router routers.Router
}

func loadSpec(t testing.TB, path string) *spec {
	t.Helper()
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
	return &spec{doc: doc, router: r}
}

// check validates req (its body is restored for the handler) and returns
// the operation's ID, or an error describing the deviation. auth checks
// the credential a security scheme names.
func (s *spec) check(req *http.Request, auth func(scheme, value string) error) (*routers.Route, error) {
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
				if ss.Type != "http" || ss.Scheme != "bearer" {
					return errors.New("unsupported scheme")
				}
				v, ok := strings.CutPrefix(ai.RequestValidationInput.Request.Header.Get("Authorization"), "Bearer ")
				if !ok {
					return errors.New("no bearer token")
				}
				return auth(ai.SecuritySchemeName, v)
			},
		},
	}
	err = openapi3filter.ValidateRequest(context.Background(), in)
	req.Body = io.NopCloser(bytes.NewReader(body))
	return route, err
}
