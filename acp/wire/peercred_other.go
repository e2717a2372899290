//go:build !linux

package wire

import (
	"net"
	"os"

	"github.com/checkfu/checkfu"
)

// checkPeerUID refuses every Unix-socket peer: this platform's peer
// credentials are not read yet. Use InsecureNoAuth on a socket in a
// directory only the user can reach, or TCP with Keys.
func checkPeerUID(c net.Conn) error {
	return checkfu.Refuse(CodePeerRefused, "wire: Unix-socket peer credentials are not supported on this platform")
}

// listenUnix listens on path; on this platform the mode is the umask's.
func listenUnix(path string) (net.Listener, error) {
	ln, err := net.Listen("unix", path)
	if err == nil {
		err = os.Chmod(path, 0o600)
		if err != nil {
			ln.Close()
			return nil, err
		}
	}
	return ln, err
}
