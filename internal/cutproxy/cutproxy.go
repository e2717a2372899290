// Package cutproxy is a loopback TCP proxy that a test can tell to sever
// every live connection on demand, at once or after a number of forwarded
// bytes. It exists to prove that a protocol survives a connection cut in
// the middle of a stream (the openProcess wire, an ACP turn).
//
// Invariants:
//
//   - The proxy listens on 127.0.0.1 only and forwards to one fixed target.
//   - A cut closes both halves of every live connection pair; a connection
//     accepted after the cut is forwarded normally.
//   - A held proxy accepts connections but keeps them waiting (not
//     forwarded) until Release, so a test can keep a client away from the
//     server for as long as it needs without sleeping.
//   - Close stops the listener and severs every connection; it is safe to
//     call more than once.
package cutproxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// A Proxy forwards TCP connections from its own loopback address to a
// target address. Create one with [New]; stop it with [Proxy.Close].
type Proxy struct {
	target string
	ln     net.Listener

	forwarded atomic.Int64 // bytes forwarded in both directions, ever
	accepted  atomic.Int64 // connections accepted, ever
	cuts      atomic.Int64 // connections severed by Cut or CutAfter

	mu sync.Mutex // guards the fields below
	// live holds every open connection; the value reports whether it is a
	// client side (as opposed to an upstream side).
	live map[net.Conn]bool
	// cutAt, when non-zero, is the forwarded byte count at which every
	// live connection is severed once.
	cutAt int64
	// held, when non-nil, is closed by Release to let waiting connections
	// proceed.
	held chan struct{}
	// cutting is set while an armed cut that reached its mark is being
	// carried out: no pump forwards anything meanwhile.
	cutting bool
	closed  bool
	wg      sync.WaitGroup
}

// New starts a proxy on 127.0.0.1 (a kernel-chosen port) forwarding to
// target, a host:port that must itself be a loopback address in tests.
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: target, ln: ln, live: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Addr returns the proxy's listening address, host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Forwarded returns the number of bytes forwarded so far, both directions
// together.
func (p *Proxy) Forwarded() int64 { return p.forwarded.Load() }

// Accepted returns the number of client connections accepted so far.
func (p *Proxy) Accepted() int64 { return p.accepted.Load() }

// Cuts returns how many connections (client sides) have been severed by
// Cut or CutAfter.
func (p *Proxy) Cuts() int64 { return p.cuts.Load() }

// Cut severs every live connection now and returns how many client
// connections it severed.
func (p *Proxy) Cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cutLocked()
}

func (p *Proxy) cutLocked() int {
	n := p.countCutLocked()
	p.closeLiveLocked()
	return n
}

// countCutLocked counts the live client connections as cut, before
// anyone can observe them closing, and returns how many there are.
func (p *Proxy) countCutLocked() int {
	n := 0
	for _, isClient := range p.live {
		if isClient {
			n++
		}
	}
	p.cuts.Add(int64(n))
	return n
}

// closeLiveLocked closes and forgets every live connection.
func (p *Proxy) closeLiveLocked() {
	for c := range p.live {
		c.Close()
		delete(p.live, c)
	}
}

// CutAfter arms a one-shot cut: once n more bytes have been forwarded (in
// either direction), every live connection is severed; the chunk that
// reaches the mark is forwarded only up to it. A later call
// replaces an armed cut that has not fired yet; n <= 0 disarms it.
func (p *Proxy) CutAfter(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n <= 0 {
		p.cutAt = 0
		return
	}
	p.cutAt = p.forwarded.Load() + n
}

// Hold makes newly accepted connections wait, unforwarded, until Release.
// Combined with Cut it keeps a client away from the target for exactly as
// long as the test wants.
func (p *Proxy) Hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held == nil {
		p.held = make(chan struct{})
	}
}

// Release lets held and future connections proceed.
func (p *Proxy) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held != nil {
		close(p.held)
		p.held = nil
	}
}

// Close stops accepting, severs every live connection, releases held ones
// and waits for the proxy's goroutines to finish.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	err := p.ln.Close()
	p.cutLocked()
	if p.held != nil {
		close(p.held)
		p.held = nil
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.accepted.Add(1)
		p.wg.Add(1)
		go p.serve(c)
	}
}

// track registers c as live; it reports false (and closes c) when the
// proxy is closed.
func (p *Proxy) track(c net.Conn, isClient bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.live[c] = isClient
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.live, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	if !p.track(client, true) {
		return
	}
	defer p.untrack(client)
	p.mu.Lock()
	held := p.held
	p.mu.Unlock()
	if held != nil {
		<-held
	}
	upstream, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	if !p.track(upstream, false) {
		return
	}
	defer p.untrack(upstream)
	p.mu.Lock()
	_, stillLive := p.live[client]
	p.mu.Unlock()
	if !stillLive { // cut while we were held or dialing
		return
	}
	done := make(chan bool, 2)
	go func() { done <- p.pump(upstream, client) }()
	go func() { done <- p.pump(client, upstream) }()
	for range 2 {
		if clean := <-done; !clean {
			// A cut or an error: sever the pair so the other direction
			// ends too.
			client.Close()
			upstream.Close()
		}
	}
}

// pump copies src to dst, counting bytes and firing an armed cut. It
// reports whether src ended cleanly with EOF (passed on as a half-close).
func (p *Proxy) pump(dst, src net.Conn) bool {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			// Reserve the bytes under the lock so an armed cut lands
			// exactly at its mark.
			p.mu.Lock()
			if p.cutting {
				p.mu.Unlock()
				return false
			}
			total := p.forwarded.Add(int64(n))
			fire := false
			if p.cutAt != 0 && total >= p.cutAt {
				over := total - p.cutAt
				p.forwarded.Add(-over)
				n -= int(over)
				p.cutAt = 0
				p.cutting = true
				fire = true
				// Counted now: from here the other direction sees
				// cutting and closes the pair, which a client can
				// observe before this chunk is written and the cut made.
				p.countCutLocked()
			}
			p.mu.Unlock()
			_, werr := dst.Write(buf[:n])
			if fire {
				p.mu.Lock()
				p.closeLiveLocked()
				p.cutting = false
				p.mu.Unlock()
				return false
			}
			if werr != nil {
				return false
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return false
			}
			// Half-close: pass EOF on and keep the other direction.
			if tc, ok := dst.(*net.TCPConn); ok {
				tc.CloseWrite()
			}
			return true
		}
	}
}
