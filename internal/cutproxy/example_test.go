package cutproxy_test

import (
	"fmt"
	"io"
	"net"

	"github.com/checkfu/checkfu/internal/cutproxy"
)

// A test puts the proxy between a client and its server, then severs the
// connection on demand.
func Example() {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() {
		c, _ := ln.Accept()
		io.Copy(c, c) // echo
		c.Close()
	}()
	p, _ := cutproxy.New(ln.Addr().String())
	defer p.Close()

	c, _ := net.Dial("tcp", p.Addr())
	c.Write([]byte("ping"))
	buf := make([]byte, 4)
	io.ReadFull(c, buf)
	fmt.Println(string(buf), p.Cut())
	// Output: ping 1
}
