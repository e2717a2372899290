package custody

import (
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
