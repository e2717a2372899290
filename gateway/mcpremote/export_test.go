package mcpremote

import "time"

// SetMaxCallDuration bounds the calls of a test by d instead of
// MaxCallDuration, until the returned function restores it.
func SetMaxCallDuration(d time.Duration) (restore func()) {
	old := maxCallDuration
	maxCallDuration = d
	return func() { maxCallDuration = old }
}
