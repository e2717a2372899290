//go:build linux && !amd64

package initstage

// No filter is written for this architecture yet: the provider reports
// seccomp missing and refuses to start (it never runs unfiltered).
const (
	auditArch = 0
	x32Bit    = 0
)

var denied []uintptr
