//go:build !unix

package egress

import "net"

// socketQuiet reports false where a socket cannot be peeked at without
// waiting: an idle connection is then never reused.
func socketQuiet(net.Conn) bool { return false }
