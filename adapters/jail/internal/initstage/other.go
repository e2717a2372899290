//go:build !linux

package initstage

// Main does nothing: there is no jail on this system.
func Main() {}
