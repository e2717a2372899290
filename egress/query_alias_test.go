package egress_test

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/egress"
	"pgregory.net/rapid"
)

// readsAsMethodOverride is the slow reference for the query check: it
// reports whether the escaped query parameter name is "_method" (or a
// "_method[...]" array of it) as a framework reads it: unescaped ("+" a
// space), cut at a NUL and stripped of leading spaces as PHP does, any
// case, a leading "." or "[" read as "_".
func readsAsMethodOverride(name string) bool {
	dec, err := url.QueryUnescape(name)
	if err != nil {
		return false
	}
	if i := strings.IndexByte(dec, 0); i >= 0 {
		dec = dec[:i]
	}
	dec = asciiLower(strings.TrimLeft(dec, " "))
	if dec != "" && (dec[0] == '.' || dec[0] == '[') {
		dec = "_" + dec[1:]
	}
	return dec == "_method" || strings.HasPrefix(dec, "_method[")
}

// asciiLower lower-cases the ASCII letters of s only, as frameworks
// compare parameter names.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// spellings of each byte of "_method" that a framework reads as it.
var spellings = map[byte][]string{
	'_': {"_", "%5F", "%5f", ".", "%2E", "%2e", "["},
	'm': {"m", "M", "%6D", "%6d", "%4D"},
	'e': {"e", "E", "%65", "%45"},
	't': {"t", "T", "%74", "%54"},
	'h': {"h", "H", "%68", "%48"},
	'o': {"o", "O", "%6F", "%4f"},
	'd': {"d", "D", "%64", "%44"},
}

// nameTokens are the pieces of other names: near misses of "_method"
// and the bytes frameworks treat specially.
var nameTokens = []string{"_", "m", "e", "t", "h", "o", "d", "M", "D", ".", "[", "]", "0", "x", "s", "+",
	"%5F", "%2E", "%5B", "%5D", "%20", "%00", "%41", "%6D", "_method", "method"}

// TestQueryAliasesOfMethodOverride: every spelling of a "_method"
// parameter that a framework reads as one (escaped, any case, after
// leading spaces, as an array "_method[]" or "_method[0]", cut at a NUL)
// is refused with request_invalid wherever it stands in the query, and
// any other name is refused exactly when the slow reference reads it as
// "_method".
func TestQueryAliasesOfMethodOverride(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var name strings.Builder
		if rapid.Bool().Draw(t, "alias") {
			for range rapid.IntRange(0, 2).Draw(t, "spaces") {
				name.WriteString(rapid.SampledFrom([]string{"+", "%20"}).Draw(t, "space"))
			}
			for _, c := range []byte("_method") {
				name.WriteString(rapid.SampledFrom(spellings[c]).Draw(t, "byte"))
			}
			name.WriteString(rapid.SampledFrom([]string{"", "[]", "[0]", "[x]", "%5B%5D", "%5b0%5d", "%00", "%00x", "%00.php"}).Draw(t, "suffix"))
		} else {
			for range rapid.IntRange(1, 10).Draw(t, "len") {
				name.WriteString(rapid.SampledFrom(nameTokens).Draw(t, "token"))
			}
		}
		param := name.String()
		if rapid.Bool().Draw(t, "value") {
			param += "=DELETE"
		}
		q := rapid.SampledFrom([]string{"%s", "a=1&%s", "%s&b=2", "a=1;%s;b"}).Draw(t, "place")
		q = strings.Replace(q, "%s", param, 1)
		u, err := url.Parse("https://api.example.com/v1/items?" + q)
		if err != nil {
			t.Fatal(err)
		}
		_, err = egress.CanonicalRequest(&http.Request{Method: "POST", URL: u})
		want := readsAsMethodOverride(name.String())
		if got := errors.Is(err, egress.CodeRequestInvalid); got != want {
			t.Fatalf("query %q: %v; the reference reads a _method parameter: %v", q, err, want)
		}
		if err != nil && !want {
			t.Fatalf("query %q: %v, want it allowed", q, err)
		}
	})
}

// FuzzQueryMethodOverride holds the query check to the slow reference
// for any one parameter name the byte checks let through.
func FuzzQueryMethodOverride(f *testing.F) {
	for _, s := range []string{"_method", "%5Fmethod[]", ".METHOD", "+%20_method%00x", "[method", "_methods", "_meth%00od", "a", "%C5%BFmethod"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if strings.ContainsAny(name, "&;=#") || strings.IndexFunc(name, func(r rune) bool { return r <= ' ' || r >= 0x7f }) >= 0 {
			return // not one name, or refused for its bytes
		}
		if _, err := url.QueryUnescape(name); err != nil {
			return // a malformed escape, refused as such
		}
		u, err := url.Parse("https://api.example.com/v1?" + name + "=1")
		if err != nil || u.RawQuery != name+"=1" {
			return
		}
		_, err = egress.CanonicalRequest(&http.Request{Method: "POST", URL: u})
		if err != nil && !errors.Is(err, egress.CodeRequestInvalid) {
			t.Fatalf("name %q: %v", name, err)
		}
		if want := readsAsMethodOverride(name); (err != nil) != want {
			t.Fatalf("name %q: %v; the reference reads a _method parameter: %v", name, err, want)
		}
	})
}
