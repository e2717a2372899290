package matrix

import (
	"os"

	"golang.org/x/sys/unix"
)

// joinNetns moves the calling thread into the network namespace ns.
func joinNetns(ns *os.File) error {
	return unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET)
}
