//go:build !unix

package mount

// openNonblock is zero where there are no FIFOs to block on.
const openNonblock = 0

// openedNonRegular reports false: only unix opens fail this way.
func openedNonRegular(error) bool { return false }
