package wire

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire/internal/frame"
)

// wrappedConn hides a connection's concrete type, as a caller's Dial that
// wraps its connections (metrics, tracing, a proxy) does.
type wrappedConn struct{ net.Conn }

// A Dial that returns a wrapped Unix-socket connection is not a Unix
// socket the Runner can read SO_PEERCRED from: without Keys it is
// refused config_invalid (it once reached the handshake with a nil
// connection and panicked).
func TestRunnerWithoutKeysRefusesAWrappedUnixConn(t *testing.T) {
	path := t.TempDir() + "/wire.sock"
	ln, err := Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{Command: command("cat")}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	r := &Runner{
		Dial: func(ctx context.Context) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, "unix", path)
			return wrappedConn{c}, err
		},
		Stdin: strings.NewReader("x\n"),
	}
	if _, err := r.Run(testCtx(t)); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Fatalf("Run over a wrapped Unix conn without Keys = %v, want %s", err, checkfu.CodeConfigInvalid)
	}
}

// ticketCache records the session tickets a TLS client is given.
type ticketCache struct {
	mu  sync.Mutex
	put int
}

func (c *ticketCache) Get(string) (*tls.ClientSessionState, bool) { return nil, false }
func (c *ticketCache) Put(_ string, cs *tls.ClientSessionState) {
	if cs != nil {
		c.mu.Lock()
		c.put++
		c.mu.Unlock()
	}
}

// The provider issues no session ticket, so no later connection can
// resume a TLS session (PSK) instead of proving its key again.
func TestProviderIssuesNoSessionTicket(t *testing.T) {
	addr := startServer(t, &Server{Command: command("cat")})
	cache := &ticketCache{}
	cfg := runnerKeys.tlsConfig(false)
	cfg.ClientSessionCache = cache
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	open, _ := frame.Append(nil, &frame.Frame{Type: frame.TypeOpen, Version: frame.ProtocolVersion, ID: frame.ProcessID{9}})
	c.Write(open)
	c.SetReadDeadline(time.Now().Add(time.Minute))
	var f frame.Frame
	if err := frame.NewDecoder(c).Decode(&f); err != nil || f.Type != frame.TypeAttached {
		t.Fatalf("open got %v, %v; want attached", f.Type, err)
	}
	cache.mu.Lock()
	defer cache.mu.Unlock()
	if cache.put != 0 {
		t.Fatalf("the provider issued %d session tickets", cache.put)
	}
}

// openOver sends open on c and reports the type of the first frame back,
// or the read error.
func openOver(c net.Conn) (frame.Type, error) {
	open, _ := frame.Append(nil, &frame.Frame{Type: frame.TypeOpen, Version: frame.ProtocolVersion, ID: frame.ProcessID{5}})
	if _, err := c.Write(open); err != nil {
		return 0, err
	}
	c.SetReadDeadline(time.Now().Add(time.Minute))
	var f frame.Frame
	err := frame.NewDecoder(c).Decode(&f)
	return f.Type, err
}

// The provider itself enforces the wire's ALPN protocol and a single
// certificate: a client holding the pinned key that offers no ALPN, or
// presents its certificate with another one behind it, does not open.
// (The client here skips its own verifyPeer, as a hostile one would.)
func TestProviderRefusesNoALPNAndExtraCertificates(t *testing.T) {
	var started atomic.Int32
	addr := startServer(t, &Server{Command: countingCommand(&started, "cat")})
	extra := runnerKeys.cert
	extra.Certificate = [][]byte{runnerKeys.cert.Certificate[0], providerKeys.cert.Certificate[0]}
	for name, edit := range map[string]func(*tls.Config){
		"no ALPN":          func(cfg *tls.Config) { cfg.NextProtos = nil },
		"another protocol": func(cfg *tls.Config) { cfg.NextProtos = []string{"checkfu-wire/0", alpnProtocol + "x"} },
		"two certificates": func(cfg *tls.Config) { cfg.Certificates = []tls.Certificate{extra} },
	} {
		cfg := runnerKeys.tlsConfig(false)
		cfg.VerifyConnection = nil
		edit(cfg)
		c, err := tls.Dial("tcp", addr, cfg)
		if err != nil {
			continue // refused in the handshake
		}
		typ, err := openOver(c)
		c.Close()
		if err == nil {
			t.Errorf("%s: open got a %v frame back", name, typ)
		}
	}
	if n := started.Load(); n != 0 {
		t.Fatalf("%d processes started", n)
	}
}

// The Runner enforces them too, against a provider holding a pinned key.
func TestRunnerRefusesProviderWithoutALPN(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			cfg := providerKeys.tlsConfig(true)
			cfg.NextProtos, cfg.VerifyConnection = nil, nil
			go func() {
				defer c.Close()
				tc := tls.Server(c, cfg)
				tc.SetDeadline(time.Now().Add(time.Minute))
				tc.Handshake()
				tc.Read(make([]byte, 1))
			}()
		}
	}()
	r := &Runner{Keys: runnerKeys, Dial: dialer(ln.Addr().String()), Stdin: strings.NewReader("secret\n"), ReconnectWithin: time.Millisecond}
	if _, err := r.Run(testCtx(t)); !errors.Is(err, CodePeerRefused) {
		t.Fatalf("Run() against a provider without ALPN = %v, want %s", err, CodePeerRefused)
	}
}
