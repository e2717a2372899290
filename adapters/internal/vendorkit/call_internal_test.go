package vendorkit

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// TestCallPathIsQuoted checks that a request path holding what a vendor
// named (net/url gives a decoded path's bytes back raw) reaches no error
// raw, and that a path is shown as it is up to maxShownPath bytes.
func TestCallPathIsQuoted(t *testing.T) {
	const code = checkfu.Code("vendor_refused")
	answer := func(status int, body string) *http.Response {
		return &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader(body))}
	}
	strictjsonOpts := strictjson.Options{MaxDepth: 4, MaxBytes: 1 << 10}
	errs := func(path string) []error {
		c := Call{Vendor: "acme", Code: code, Method: "GET", Path: path}
		_, read := c.Read(answer(500, ""), 1<<10, 200)
		_, notJSON := c.Object([]byte("{"), strictjsonOpts)
		_, notObject := c.Object([]byte("[]"), strictjsonOpts)
		return []error{c.Unanswered(errors.New("edge: down")), read, notJSON, notObject}
	}
	for _, path := range []string{
		"/toolbox/\x1b]0;owned\x07/process/session/s/command/\x1b[2J",
		"/cmd/\u202eexe",
		"/cmd/\r\nforged: line",
		"/" + strings.Repeat("a", maxShownPath),
	} {
		for i, err := range errs(path) {
			if err == nil || !errors.Is(err, code) {
				t.Fatalf("%q: error %d = %v", path, i, err)
			}
			if msg := err.Error(); strings.Contains(msg, path) || strings.ContainsAny(msg, "\x1b\x07\r\n\u202e") {
				t.Errorf("%q: error %d shows the path raw: %q", path, i, msg)
			}
		}
	}
	longest := "/" + strings.Repeat("a", maxShownPath-1)
	for i, err := range errs(longest) {
		if !strings.Contains(err.Error(), " "+longest+" ") && !strings.Contains(err.Error(), " "+longest+":") {
			t.Errorf("error %d does not show a %d-byte printable path as it is: %q", i, maxShownPath, err)
		}
	}
}
