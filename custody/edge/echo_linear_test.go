package edge

import (
	"bytes"
	"strings"
	"testing"
)

// TestDecodeEscapesIsLinear (red team, docs/changes/wt-rtpipe.md): the
// escape search of one decoding round reads each byte of the answer at
// most once per escape byte, whatever the answer: escapes of one kind
// only (the search for the other two must not start over at each), all
// three mixed, one rare kind at the very end, none at all. An answer of
// 8 MiB of "&amp;" or "%41" cost minutes of a plane's CPU when each
// escape searched the whole rest of the answer again.
func TestDecodeEscapesIsLinear(t *testing.T) {
	const n = 1 << 16
	for _, body := range []string{
		strings.Repeat("&amp;", n/5),
		strings.Repeat("%41", n/3),
		strings.Repeat(`\u0041`, n/6),
		strings.Repeat(`\u0041%41&amp;`, n/14),
		strings.Repeat("%41", n/3) + `\/`,
		strings.Repeat("&x", n/2) + "%41",
		strings.Repeat("a", n),
		strings.Repeat("%%&&\\\\", n/6),
	} {
		out, _, scanned := decodeEscapesCounted([]byte(body))
		if scanned > 3*len(body) {
			t.Errorf("%.12q... (%d bytes): the escape search read %d bytes, want at most %d", body, len(body), scanned, 3*len(body))
		}
		if want, _ := decodeEscapesReference([]byte(body)); !bytes.Equal(out, want) {
			t.Errorf("%.12q...: decoded %.20q..., the reference %.20q...", body, out, want)
		}
	}
}

// decodeEscapesReference is decodeEscapes as it was first written (the
// whole rest searched for each escape byte at every escape): quadratic,
// and the result the linear search must agree with.
func decodeEscapesReference(s []byte) ([]byte, bool) {
	index := func(s []byte) int {
		i := -1
		for _, c := range escapeBytes {
			if j := bytes.IndexByte(s, c); j >= 0 && (i < 0 || j < i) {
				i = j
			}
		}
		return i
	}
	i := index(s)
	if i < 0 {
		return s, false
	}
	out := make([]byte, 0, len(s))
	changed := false
	rest := s
	for i >= 0 {
		out = append(out, rest[:i]...)
		rest = rest[i:]
		n := 0
		switch rest[0] {
		case '\\':
			out, n = jsonEscape(out, rest)
		case '%':
			if len(rest) >= 3 {
				hi, ok1 := unhex(rest[1])
				lo, ok2 := unhex(rest[2])
				if ok1 && ok2 {
					out, n = append(out, hi<<4|lo), 3
				}
			}
		case '&':
			var r rune
			if r, n = htmlRef(rest); n > 0 {
				out = append(out, string(r)...)
			}
		}
		if n == 0 {
			out, n = append(out, rest[0]), 1
		} else {
			changed = true
		}
		rest = rest[n:]
		i = index(rest)
	}
	out = append(out, rest...)
	if !changed {
		return s, false
	}
	return out, true
}

// FuzzDecodeEscapesLinear: on any input, the linear search decodes what
// the reference does, reading at most three bytes per byte.
func FuzzDecodeEscapesLinear(f *testing.F) {
	for _, s := range []string{"", "&amp;%41\\/", "%%%", "&&&sol;", `\u00e9%C3%A9&#233;`, "a%4", "&#x41;&#X42;\\u0043"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		out, changed, scanned := decodeEscapesCounted(s)
		want, wantChanged := decodeEscapesReference(s)
		if !bytes.Equal(out, want) || changed != wantChanged {
			t.Fatalf("decodeEscapes(%q) = %q, %v; the reference %q, %v", s, out, changed, want, wantChanged)
		}
		if scanned > 3*len(s) {
			t.Fatalf("decodeEscapes(%q): read %d bytes", s, scanned)
		}
	})
}
