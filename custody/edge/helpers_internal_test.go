package edge

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
)

var testHandle = address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")

func testBinding() custody.Binding {
	return custody.Binding{Namespace: "github", Integration: "deploy-token", Handle: testHandle}
}

// TestRemoveLineBreaks: the result is the input without CR and LF, for
// any mix of them (the reference removes them one by one).
func TestRemoveLineBreaks(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.SliceOf(rapid.SampledFrom([]byte("ab\r\n"))).Draw(t, "s")
		want := bytes.ReplaceAll(bytes.ReplaceAll(s, []byte("\r"), nil), []byte("\n"), nil)
		if got := removeLineBreaks(s); !bytes.Equal(got, want) {
			t.Fatalf("removeLineBreaks(%q) = %q, want %q", s, got, want)
		}
	})
}

// TestAppendLineBreaksRemoved: appended to any prefix, the result is the
// input without CR and LF, for texts of the bytes nearest CR and LF.
func TestAppendLineBreaksRemoved(t *testing.T) {
	alphabet := []byte{'\r', '\n', 0x00, 0x01, 0x09, 0x0b, 0x0c, 0x0e, 0x7f, 0x80, 0x8a, 0x8d, 0xff, 'a'}
	rapid.Check(t, func(t *rapid.T) {
		prefix := rapid.SliceOfN(rapid.Byte(), 0, 9).Draw(t, "prefix")
		s := rapid.SliceOf(rapid.SampledFrom(alphabet)).Draw(t, "s")
		want := append(bytes.Clone(prefix), bytes.ReplaceAll(bytes.ReplaceAll(s, []byte("\r"), nil), []byte("\n"), nil)...)
		if got := appendLineBreaksRemoved(bytes.Clone(prefix), s); !bytes.Equal(got, want) {
			t.Fatalf("appendLineBreaksRemoved(%q, %q) = %q, want %q", prefix, s, got, want)
		}
	})
}
