package jail

import (
	"context"
	"net"
	"time"
)

// startJailRelay serves ln, the listener on 127.0.0.1 inside a jail's
// network namespace, carrying each connection to the guard's Unix
// socket and back, until stopped. The guard sees every request; the
// relay reads none of it.
func startJailRelay(ln net.Listener, guard string) *relay {
	d := &net.Dialer{Timeout: relayDialTimeout}
	return startRelay(ln, MaxRelayConns, func(ctx context.Context) (net.Conn, error) {
		return d.DialContext(ctx, "unix", guard)
	})
}

// expired is a grace already over: [relay.stop] closes at once.
var expired = func() <-chan time.Time {
	c := make(chan time.Time)
	close(c)
	return c
}()
