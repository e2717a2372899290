package admission

import (
	"strconv"
	"unicode/utf8"
)

// quote quotes hostile text into an error: strconv-quoted, cut at 64
// bytes on a character boundary with "... (N bytes)" appended when cut.
// It is checkfu.Quote's contract, kept here until that helper is on main;
// then every call becomes checkfu.Quote and this file goes.
func quote(s string) string {
	const max = 64
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "... (" + strconv.Itoa(len(s)) + " bytes)"
}
