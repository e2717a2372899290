package vendorkit

import (
	"io"
	"net/http"
	"slices"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// A Call names one request to a vendor in its refusals.
type Call struct {
	// Vendor prefixes every error ("e2b").
	Vendor string
	// Code is the refusal code for the vendor's failures.
	Code checkfu.Code
	// Method and Path are the request's, as errors show them.
	Method, Path string
}

// Unanswered is the refusal for a request the vendor never answered; err
// (the Edge's error) is kept as the cause.
func (c Call) Unanswered(err error) error {
	return &checkfu.Refusal{Code: c.Code, Message: c.Vendor + ": " + c.Method + " " + c.Path + " was not answered", Err: err}
}

// Read reads at most max+1 bytes of resp's body (the caller closes it)
// and refuses a status that is not one of want. A vendor's error body is
// never quoted: only its status and length are reported, so that nothing
// the vendor echoes (a header, a key) reaches an error.
func (c Call) Read(resp *http.Response, max int64, want ...int) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, checkfu.Refuse(c.Code, "%s: %s %s: the answer was cut", c.Vendor, c.Method, c.Path)
	}
	if !slices.Contains(want, resp.StatusCode) {
		return nil, checkfu.Refuse(c.Code, "%s: %s %s answered %d, not %d (a %d-byte body, not quoted)", c.Vendor, c.Method, c.Path, resp.StatusCode, want[0], len(data))
	}
	return data, nil
}

// Object decodes data strictly (opts) into a generic JSON object.
func (c Call) Object(data []byte, opts strictjson.Options) (map[string]any, error) {
	v, err := strictjson.Parse(data, opts)
	if err != nil {
		return nil, &checkfu.Refusal{Code: c.Code, Message: c.Vendor + ": " + c.Method + " " + c.Path + ": the answer is not strict JSON", Err: err}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, checkfu.Refuse(c.Code, "%s: %s %s: the answer is not an object", c.Vendor, c.Method, c.Path)
	}
	return m, nil
}
