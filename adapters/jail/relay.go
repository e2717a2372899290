package jail

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"time"
)

// GuardStopGrace bounds how long stopping an allowlist instance's guard
// (the stop function [LocalGuard] returns, which Destroy calls) waits
// for the connections its socket relays to end on their own, and for
// the guard's requests in flight. Then it closes every relayed
// connection itself, both sides, and returns: a workload that holds a
// connection open, or an upstream that never answers, delays Destroy
// (and so the Runner's Close) by this much at most.
const GuardStopGrace = 2 * time.Second

// MaxRelayConns bounds the connections one jail's relay carries at once;
// one more is closed at accept.
const MaxRelayConns = 64

// acceptRetryMax bounds the wait of a relay's accept loop after an
// error it retries ([acceptCanRetry]); the wait doubles from 1 ms up to
// it, and a stop ends it, and the loop, at once.
const acceptRetryMax = time.Second

// acceptCanRetry reports whether an error of Accept leaves the listener
// usable: a shortage of descriptors or memory (a workload's flood in
// another jail of the Runner can cause one), or a connection aborted
// before it was taken. Any other error, the listener's close among
// them, ends the accept loop.
func acceptCanRetry(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// relayDialTimeout bounds a relay's dial of its far side (the guard's
// socket, or the guard's own listener behind it).
const relayDialTimeout = 5 * time.Second

// A relay carries each connection its listener accepts to a connection
// it dials, and back, reading none of it, until stopped. It knows every
// connection it carries, so that stop can close them: nothing it
// started outlives stop.
type relay struct {
	ln   net.Listener
	dial func(ctx context.Context) (net.Conn, error)
	max  int // connections carried at once; 0 for no bound

	ctx      context.Context // ends when stop closes by force: cancels dials
	cancel   context.CancelFunc
	accepted chan struct{} // closed when the accept loop has returned
	closing  chan struct{} // closed when stop begins: ends an accept retry's wait
	closeMu  sync.Once     // closes closing once, however often stop is called
	wg       sync.WaitGroup

	mu     sync.Mutex // guards conns and forced
	conns  map[net.Conn]struct{}
	forced bool // stop closed the connections; any dialled since is closed at once
}

// startRelay serves ln until stop: each connection is carried to one
// dial makes; past max (when max > 0), one more is closed at accept.
func startRelay(ln net.Listener, max int, dial func(ctx context.Context) (net.Conn, error)) *relay {
	ctx, cancel := context.WithCancel(context.Background())
	r := &relay{ln: ln, dial: dial, max: max, ctx: ctx, cancel: cancel,
		accepted: make(chan struct{}), closing: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	go r.accept()
	return r
}

func (r *relay) accept() {
	defer close(r.accepted)
	var sem chan struct{}
	if r.max > 0 {
		sem = make(chan struct{}, r.max)
	}
	var delay time.Duration
	for {
		c, err := r.ln.Accept()
		if err != nil {
			if !acceptCanRetry(err) {
				return
			}
			// A shortage (of descriptors, of memory) or a connection
			// that went before it was taken: wait, and serve on.
			delay = min(max(2*delay, time.Millisecond), acceptRetryMax)
			select {
			case <-time.After(delay):
			case <-r.closing:
				return
			}
			continue
		}
		delay = 0
		if sem != nil {
			select {
			case sem <- struct{}{}:
			default:
				c.Close()
				continue
			}
		}
		if !r.track(c) {
			c.Close()
			continue
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			if sem != nil {
				defer func() { <-sem }()
			}
			defer r.untrack(c)
			u, err := r.dial(r.ctx)
			if err != nil {
				return
			}
			if !r.track(u) {
				u.Close()
				return
			}
			defer r.untrack(u)
			splice(c, u)
		}()
	}
}

// track records c, so stop can close it. It reports false, keeping
// nothing, once stop has closed the connections.
func (r *relay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.forced {
		return false
	}
	r.conns[c] = struct{}{}
	return true
}

// untrack closes c and forgets it.
func (r *relay) untrack(c net.Conn) {
	c.Close()
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
}

// stop closes the listener, waits for the connections carried to end on
// their own until grace fires (a closed channel: not at all), then
// closes every one left, both sides, and cancels the dials under way,
// and returns once every goroutine of the relay has.
func (r *relay) stop(grace <-chan time.Time) {
	r.closeMu.Do(func() { close(r.closing) })
	r.ln.Close()
	<-r.accepted // Accept returns once the listener is closed
	idle := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(idle)
	}()
	select {
	case <-idle:
	case <-grace:
	}
	r.mu.Lock()
	r.forced = true
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	r.cancel()
	<-idle // every copy and dial returns once its connections are closed
}

// splice copies both ways between a and b, half-closing each direction
// at its end, and returns when both are done.
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	half := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go half(a, b)
	go half(b, a)
	<-done
	<-done
}
