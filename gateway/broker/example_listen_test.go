package broker_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/checkfu/checkfu/gateway/broker"
)

// ListenUnix makes the socket connectable by the sandbox's own user:
// who can reach it is decided by the directory it is in, which the
// caller creates and mounts into exactly one sandbox.
func ExampleListenUnix() {
	dir, err := os.MkdirTemp("", "broker")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "broker.sock")
	ln, err := broker.ListenUnix(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ln.Close()
	sock, _ := os.Stat(path)
	d, _ := os.Stat(dir)
	fmt.Println(sock.Mode().Perm(), d.Mode().Perm())
	// Output: -rw-rw-rw- -rwx------
}
