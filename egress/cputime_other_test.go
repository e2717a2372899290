//go:build !unix

package egress

import "testing"

// reportCPU reports nothing where getrusage is not available.
func reportCPU(b *testing.B) func() { return func() {} }
