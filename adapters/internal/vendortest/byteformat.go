package vendortest

import (
	"encoding/base64"
	"errors"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// byteFormat checks an OpenAPI string of format "byte" as the vendors'
// decoders read one (protojson's bytes, for E2B's envd): base64 in the
// standard or the URL-safe alphabet, padded or not. It decodes in one
// linear pass, where kin-openapi's own check runs a regular expression
// that accepts any run of base64 characters ("a" included) and costs,
// under the race detector, tens of milliseconds per stdin request.
type byteFormat struct{}

var errNotBase64 = errors.New("not base64 in the standard or URL-safe alphabet")

func (byteFormat) Validate(value string) error {
	for _, enc := range [...]*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if _, err := enc.DecodeString(value); err == nil {
			return nil
		}
	}
	return errNotBase64
}

var defineByteFormat sync.Once

// useByteFormat puts byteFormat in place of kin-openapi's "byte" format,
// which is process-wide: only this package's tests' fakes load specs.
func useByteFormat() {
	defineByteFormat.Do(func() { openapi3.DefineStringFormatValidator("byte", byteFormat{}) })
}
