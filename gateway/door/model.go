package door

import (
	"context"
	"io"
	"net"
	"net/netip"
	"sync"

	"github.com/checkfu/checkfu"
)

// MaxModelConns bounds the model relay's connections at once. An agent
// keeps a few open (a stream, a side call, a token count); one past the
// bound is closed unanswered, so a flood holds no more than this many
// connections to the plane.
const MaxModelConns = 32

// ListenModel listens for the model relay on addr, which must be a
// loopback address with a port ("127.0.0.1:0" picks a free one). Any
// other address is refused with [CodeRelayArgumentsInvalid]: the relay serves only the
// sandbox's own processes.
func ListenModel(addr string) (net.Listener, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().IsLoopback() {
		return nil, checkfu.Refuse(CodeRelayArgumentsInvalid, "door: the model relay listens on a loopback address with a port, not %s", checkfu.Quote(addr))
	}
	return net.Listen("tcp", ap.String())
}

// ServeModel accepts connections on ln and relays each, byte for byte in
// both directions, over a connection of its own to the broker socket at
// socket, where the plane answers model requests. It holds at most
// MaxModelConns connections; one more is closed at once. It returns when
// ctx ends or ln fails, after closing ln and every relayed connection.
func ServeModel(ctx context.Context, ln net.Listener, socket string) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = map[net.Conn]bool{}
	)
	slots := make(chan struct{}, MaxModelConns)
	stop := context.AfterFunc(ctx, func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	defer stop()
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		select {
		case slots <- struct{}{}:
		default:
			c.Close()
			continue
		}
		mu.Lock()
		if ctx.Err() != nil {
			mu.Unlock()
			c.Close()
			<-slots
			continue
		}
		conns[c] = true
		mu.Unlock()
		wg.Go(func() {
			defer func() {
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
				<-slots
			}()
			relayConn(ctx, c, socket)
		})
	}
}

// relayConn relays c to a new connection to the broker socket. When the
// agent ends its side, the plane's side is half-closed so it can finish
// its answer; when the plane ends its side, both connections close.
func relayConn(ctx context.Context, c net.Conn, socket string) {
	defer c.Close()
	up, err := dial(ctx, socket)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{})
	go func() {
		io.Copy(up, c)
		halfClose(up)
		close(done)
	}()
	io.Copy(c, up)
	c.Close()
	up.Close()
	<-done
}

// halfClose ends the writing side of c, when it has one.
func halfClose(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	} else {
		c.Close()
	}
}
