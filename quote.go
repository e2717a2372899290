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
func Quote(s string) string { return quoteN(s, MaxQuoted) }

// MaxCause is how many bytes of an error's text [Cause] keeps.
const MaxCause = 512

// Cause returns the operator's cause of err: its text quoted as [Quote]
// quotes it, but cut to its first [MaxCause] bytes, so that a dial or
// TLS error (which names addresses and certificate names) reads whole.
// It returns "" for a nil err. A cause is for the operator alone (a log,
// the operator's part of an event): the caller decides that no
// credential is in err, and never hands a cause to sandbox code.
func Cause(err error) string {
	if err == nil {
		return ""
	}
	return quoteN(err.Error(), MaxCause)
}

// quoteN is Quote with a bound of n bytes.
func quoteN(s string, n int) string {
	if len(s) <= n {
		return strconv.Quote(s)
	}
	cut := n
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
