package jail

import (
	"net"
	"sync"
	"time"
)

// MaxRelayConns bounds the connections one jail's relay carries at once;
// one more is closed at accept.
const MaxRelayConns = 64

// relayDialTimeout bounds the dial of the guard's socket.
const relayDialTimeout = 5 * time.Second

// serveRelay accepts on ln, the listener on 127.0.0.1 inside a jail's
// network namespace, and carries each connection to the guard's Unix
// socket and back, until ln is closed. The guard sees every request; the
// relay reads none of it.
func serveRelay(ln net.Listener, guard string) {
	sem := make(chan struct{}, MaxRelayConns)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		select {
		case sem <- struct{}{}:
		default:
			c.Close()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			relay(c, guard)
		}()
	}
}

func relay(c net.Conn, guard string) {
	defer c.Close()
	g, err := net.DialTimeout("unix", guard, relayDialTimeout)
	if err != nil {
		return
	}
	defer g.Close()
	splice(c, g)
}
