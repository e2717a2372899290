package checkfu

import (
	"strconv"
	"unicode/utf8"
)

// MaxQuoted is how many bytes of a hostile string [Quote] keeps.
const MaxQuoted = 64

// Quote returns s quoted for an error message or a log line: Go-quoted
// (so control characters, invalid UTF-8 and quotes are escaped and the
// result is one line), and cut to its first [MaxQuoted] bytes when longer,
// followed by "... (N bytes)" giving the full length.
//
// Quote is the one rule for quoting text that came from an agent, a
// provider, a request or a workload: such text can be of any size and
// hold anything, and refusals reach logs and events. The cut never
// splits a valid UTF-8 character: a character that straddles the bound is
// dropped whole.
func Quote(s string) string {
	if len(s) <= MaxQuoted {
		return strconv.Quote(s)
	}
	cut := MaxQuoted
	// Back up to the start of a character that straddles the bound, if
	// the bytes there form a valid one; invalid bytes are cut anywhere.
	for back := 1; back < utf8.UTFMax && back <= cut; back++ {
		if utf8.RuneStart(s[cut-back]) {
			r, size := utf8.DecodeRuneInString(s[cut-back:])
			if (r != utf8.RuneError || size > 1) && size > back {
				cut -= back
			}
			break
		}
	}
	return strconv.Quote(s[:cut]) + "... (" + strconv.Itoa(len(s)) + " bytes)"
}
