package vendorkit

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// An Edge sends a request with the plane credential attached: it
// resolves handle at send time and sets header to prefix + the secret on
// a copy of req, sends that one request, following no redirect, and
// hands back its answer. Every vendor adapter declares its own Edge
// with this one method, so a value of any of them is an Edge.
type Edge interface {
	Send(req *http.Request, handle, header, prefix string) (*http.Response, error)
}

// JSONBody returns in encoded as JSON, as a request body; a nil in is
// no body (nil, nil). The caller words a refusal of the error.
func JSONBody(in any) (io.Reader, error) {
	if in == nil {
		return nil, nil
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	return bytes.NewReader(b), nil
}

// A Call names one request to a vendor in its refusals.
type Call struct {
	// Vendor prefixes every error ("e2b").
	Vendor string
	// Code is the refusal code for the vendor's failures.
	Code checkfu.Code
	// Method and Path are the request's. Errors show Path as it is when
	// it is printable ASCII without spaces and at most 256 bytes
	// (maxShownPath), quoted (checkfu.Quote, which also cuts it) otherwise: a path
	// may hold what a vendor named (a proxy's path, a command's ID), and
	// net/url's decoded Path gives its bytes back raw.
	Method, Path string
}

// maxShownPath is the longest request path an error shows as it is; a
// longer one is quoted, and so cut to checkfu.MaxQuoted bytes.
const maxShownPath = 256

// path is c.Path as an error shows it.
func (c Call) path() string {
	if len(c.Path) > maxShownPath || !printableASCII(c.Path) {
		return checkfu.Quote(c.Path)
	}
	return c.Path
}

// Unanswered is the refusal for a request the vendor never answered; err
// (the Edge's error) is kept as the cause.
func (c Call) Unanswered(err error) error {
	return &checkfu.Refusal{Code: c.Code, Message: c.Vendor + ": " + c.Method + " " + c.path() + " was not answered", Err: err}
}

// Read reads at most max+1 bytes of resp's body (the caller closes it)
// and refuses a status that is not one of want. A vendor's error body is
// never quoted: only its status and length are reported, so that nothing
// the vendor echoes (a header, a key) reaches an error.
func (c Call) Read(resp *http.Response, max int64, want ...int) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, checkfu.Refuse(c.Code, "%s: %s %s: the answer was cut", c.Vendor, c.Method, c.path())
	}
	if !slices.Contains(want, resp.StatusCode) {
		return nil, checkfu.Refuse(c.Code, "%s: %s %s answered %d, not %d (a %d-byte body, not quoted)", c.Vendor, c.Method, c.path(), resp.StatusCode, want[0], len(data))
	}
	return data, nil
}

// Exchange sends req through edge with the credential handle attached
// as header (value prefix + the secret), and reads the answer as
// [Call.Read] does: at most max+1 bytes, and a status among want. A
// request the edge could not send is refused as [Call.Unanswered].
func (c Call) Exchange(edge Edge, req *http.Request, handle, header, prefix string, max int64, want ...int) ([]byte, error) {
	resp, err := edge.Send(req, handle, header, prefix)
	if err != nil {
		return nil, c.Unanswered(err)
	}
	defer resp.Body.Close()
	return c.Read(resp, max, want...)
}

// Object decodes data strictly (opts) into a generic JSON object.
func (c Call) Object(data []byte, opts strictjson.Options) (map[string]any, error) {
	v, err := strictjson.Parse(data, opts)
	if err != nil {
		return nil, &checkfu.Refusal{Code: c.Code, Message: c.Vendor + ": " + c.Method + " " + c.path() + ": the answer is not strict JSON", Err: err}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, checkfu.Refuse(c.Code, "%s: %s %s: the answer is not an object", c.Vendor, c.Method, c.path())
	}
	return m, nil
}
