//go:build unix

package egress

import (
	"net"
	"syscall"
)

// socketQuiet reports whether c's socket has nothing to read, not even an
// end of stream, without waiting and without consuming anything: one
// recv(2) with MSG_PEEK|MSG_DONTWAIT. A connection that is not a socket
// is never quiet.
func socketQuiet(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	quiet := false
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		quiet = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
		return true
	})
	return err == nil && quiet
}
