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
