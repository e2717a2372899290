package address

import (
	"errors"
	"testing"
)

// FuzzParseHandle: ParseHandle never panics, accepts only the canonical
// text form (parse then String gives back the input), and refuses with
// CodeHandleInvalid otherwise.
func FuzzParseHandle(f *testing.F) {
	for _, s := range []string{"ch_aaaaaaaaaaaaaaaaaaaaaaaaaa", "ch_abcdefghijklmnopqrstuvwxya", "ch_aaaaaaaaaaaaaaaaaaaaaaaaab", "", "ch_", "CH_AAAAAAAAAAAAAAAAAAAAAAAAAA", "ch_aaaaaaaaaaaaaaaaaaaaaaaaa="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHandle(s)
		if err != nil {
			if !errors.Is(err, CodeHandleInvalid) {
				t.Fatalf("ParseHandle(%q) error %v has no code %s", s, err, CodeHandleInvalid)
			}
			return
		}
		if h.String() != s {
			t.Fatalf("ParseHandle(%q).String() = %q", s, h.String())
		}
	})
}
