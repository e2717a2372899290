package impure

import "strings"

// Upper is pure.
func Upper(s string) string { return strings.ToUpper(s) }
