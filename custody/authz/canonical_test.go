package authz

import (
	"bytes"
	"encoding/json"
	"testing"

	"pgregory.net/rapid"
)

// canonicalValue draws a value of the types parseStrictJSON makes, with
// nil containers, any bytes in strings and names (invalid UTF-8, control
// bytes, quotes, U+2028 and U+2029 among them), number literals valid or
// not, and now and then a type it does not make (which goes through the
// Encoder).
func canonicalValue(t *rapid.T, depth int) any {
	str := rapid.OneOf(
		rapid.String(),
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
		rapid.SampledFrom([]string{"\u2028", "\u2029", "a\u2028b", "\"\\/", "\x00\x1f\x7f", "\b\f\n\r\t", "é😀", "\xff", "<&>"}),
	)
	number := rapid.OneOf(
		rapid.SampledFrom([]string{"", "0", "-0", "1.5", "1e5", "1E+5", "-2.5e-3", "01", "1.", ".5", "1e", "1e+", "-", "+1", "0x1", " 1"}),
		rapid.StringMatching(`-?[0-9]{0,3}(\.[0-9]{0,2})?([eE][+-]?[0-9]{0,2})?`),
	)
	kinds := []string{"null", "bool", "string", "number", "other"}
	if depth < 4 {
		kinds = append(kinds, "array", "object", "nilarray", "nilobject")
	}
	switch rapid.SampledFrom(kinds).Draw(t, "kind") {
	case "bool":
		return rapid.Bool().Draw(t, "bool")
	case "string":
		return str.Draw(t, "string")
	case "number":
		return json.Number(number.Draw(t, "number"))
	case "other":
		return rapid.SampledFrom([]any{1, 2.5, "x", []string{"a"}, map[string]int{"b": 1}}).Draw(t, "other")
	case "array":
		a := []any{}
		for range rapid.IntRange(0, 4).Draw(t, "len") {
			a = append(a, canonicalValue(t, depth+1))
		}
		return a
	case "object":
		m := map[string]any{}
		for range rapid.IntRange(0, 4).Draw(t, "len") {
			m[str.Draw(t, "name")] = canonicalValue(t, depth+1)
		}
		return m
	case "nilarray":
		return []any(nil)
	case "nilobject":
		return map[string]any(nil)
	}
	return nil
}

// TestCanonicalJSONAgreesWithEncoder holds canonicalJSON to what it was
// before it wrote the bytes itself, encoding/json's Encoder with HTML
// escaping off: the same bytes, or both refuse.
func TestCanonicalJSONAgreesWithEncoder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := canonicalValue(t, 0)
		got, err := canonicalJSON(v)
		want, werr := encoderJSON(v)
		if (err == nil) != (werr == nil) {
			t.Fatalf("canonicalJSON(%#v) error %v, Encoder error %v", v, err, werr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("canonicalJSON(%#v) = %q, Encoder = %q", v, got, want)
		}
	})
}

// FuzzCanonicalJSON does the same for the trees parseStrictJSON makes of
// any bytes.
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"b":1,"a":[true,null,"x\u2028y"]}`, `"\u0000\u001f\"\\"`, `{"é":-0.5e+3,"😀":{"":[]}}`, `"\ud83d\ude00<&>"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := parseStrictJSON(data)
		if err != nil {
			return
		}
		got, err := canonicalJSON(v)
		if err != nil {
			t.Fatalf("canonicalJSON of a parsed %q: %v", data, err)
		}
		want, err := encoderJSON(v)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("canonicalJSON of %q = %q, Encoder = %q (%v)", data, got, want, err)
		}
	})
}

// BenchmarkCanonicalJSON encodes a tool call's parsed arguments.
func BenchmarkCanonicalJSON(b *testing.B) {
	v, err := parseStrictJSON([]byte(`{"state":"open","labels":["bug","p1"],"limit":20,"title":"a \"quoted\" title\n"}`))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := canonicalJSON(v); err != nil {
			b.Fatal(err)
		}
	}
}
