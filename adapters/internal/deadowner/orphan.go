package deadowner

import "strings"

// Orphan reports whether name is the name of something a dead owner
// left under prefix: prefix, then an owner name [Dead] reports true
// for, then "-" and anything. A name that does not begin with prefix,
// has no "-" after the owner, or names an owner that is alive, of
// another PID namespace, unreadable or malformed (an old "PID" alone)
// is no orphan: it is kept.
func Orphan(name, prefix string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	owner, _, dashed := strings.Cut(rest, "-")
	return ok && dashed && Dead(owner)
}
