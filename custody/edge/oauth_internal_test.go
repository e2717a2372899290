package edge

import (
	"bytes"
	"net/url"
	"testing"

	"pgregory.net/rapid"
)

// TestAppendFormEscaped checks the refresher's in-place encoder against
// url.QueryEscape, on every byte and on random tokens.
func TestAppendFormEscaped(t *testing.T) {
	for c := range 256 {
		p := []byte{byte(c)}
		if got, want := string(appendFormEscaped(nil, p)), url.QueryEscape(string(p)); got != want {
			t.Errorf("byte %#02x: %q, want %q", c, got, want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		p := rapid.SliceOf(rapid.Byte()).Draw(t, "p")
		if got, want := string(appendFormEscaped([]byte("x="), p)), "x="+url.QueryEscape(string(p)); got != want {
			t.Fatalf("%q: %q, want %q", p, got, want)
		}
	})
}

// TestFormBodyNeverGrows: the refresh request body is built in the one
// buffer formBody allocates, whatever the token holds, so no copy of the
// token is left behind in an outgrown array.
func TestFormBodyNeverGrows(t *testing.T) {
	const prefix = "grant_type=refresh_token&refresh_token="
	for _, rt := range [][]byte{bytes.Repeat([]byte{0xff}, 37), []byte("plain-token_1.0~"), nil} {
		b := formBody(prefix, rt)
		if want := len(prefix) + 3*len(rt); cap(b) != want {
			t.Errorf("token of %d bytes: the body's capacity is %d, want the %d allocated", len(rt), cap(b), want)
		}
		if got, want := string(b), prefix+url.QueryEscape(string(rt)); got != want {
			t.Errorf("body %q, want %q", got, want)
		}
	}
}
