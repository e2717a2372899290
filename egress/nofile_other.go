//go:build !unix

package egress

// descriptorLimit has no RLIMIT_NOFILE to read here: the Default caps
// apply.
func descriptorLimit() uint64 { return 1 << 20 }
