package door_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/checkfu/checkfu/gateway/door"
)

// The door relays an agent's MCP lines to the broker socket and the
// broker's answers back; here a one-line "broker" answers every line.
func ExampleRelayMCP() {
	dir, _ := os.MkdirTemp("", "door-")
	defer os.RemoveAll(dir)
	socket := filepath.Join(dir, "broker.sock")
	ln, _ := net.Listen("unix", socket)
	defer ln.Close()
	go func() {
		c, _ := ln.Accept()
		defer c.Close()
		io.ReadAll(c)
		c.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
	}()
	var out strings.Builder
	err := door.RelayMCP(context.Background(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"), &out, socket)
	fmt.Print(out.String(), err)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{}}
	// <nil>
}
