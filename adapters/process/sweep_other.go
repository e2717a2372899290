//go:build !unix

package process

// sweepDirs does nothing here: there is no pid to check an owner by.
func sweepDirs() {}
