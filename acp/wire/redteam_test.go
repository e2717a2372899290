package wire

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire/internal/frame"
	"github.com/checkfu/checkfu/signing"
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

// A network stranger who needs no key holds MaxPendingHandshakes silent
// TCP connections. The pinned Runner still opens at once: past the cap
// the oldest pending connection is dropped, instead of Serve waiting up
// to the 30 s handshake deadline (over and over, as the stranger
// reconnects) before it accepts the Runner.
func TestSilentStrangersDoNotLockOutTheRunner(t *testing.T) {
	addr := startServer(t, &Server{Command: command("cat")})
	for range MaxPendingHandshakes {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	ctx, cancel := context.WithTimeout(testCtx(t), 10*time.Second)
	defer cancel()
	var out strings.Builder
	r := &Runner{Keys: runnerKeys, Dial: dialer(addr), Stdin: strings.NewReader("runner\n"), Stdout: &out}
	if status, err := r.Run(ctx); err != nil || status != 0 || out.String() != "runner\n" {
		t.Fatalf("the Runner behind %d silent strangers: Run() = %d, %v, %q", MaxPendingHandshakes, status, err, out.String())
	}
}

// lineWaiter is a Stdout that signals each time a write arrives.
type lineWaiter struct {
	mu  sync.Mutex
	buf strings.Builder
	got chan struct{}
}

func (w *lineWaiter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(p)
	w.mu.Unlock()
	w.got <- struct{}{}
	return len(p), nil
}

// Dropping the oldest pending handshake never drops a connection that
// finished its handshake: a Runner attached before a flood of silent
// connections keeps its connection.
func TestServeDropsOnlyPendingHandshakes(t *testing.T) {
	ln := newFakeListener()
	srv := &Server{Command: command("cat"), InsecureNoAuth: true}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	inR, inW := io.Pipe()
	out := &lineWaiter{got: make(chan struct{}, 16)}
	var drops atomic.Int32
	r := &Runner{InsecureNoAuth: true, Stdin: inR, Stdout: out,
		Dial: func(ctx context.Context) (net.Conn, error) {
			a, b := net.Pipe()
			select {
			case ln.conns <- b:
				return a, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
		Logf: func(string, ...any) { drops.Add(1) },
	}
	ran := make(chan error, 1)
	go func() { _, err := r.Run(testCtx(t)); ran <- err }()
	inW.Write([]byte("a\n"))
	<-out.got // attached and served
	var silent []net.Conn
	for range MaxPendingHandshakes + 1 {
		a, b := net.Pipe()
		ln.conns <- b
		silent = append(silent, a)
	}
	defer func() {
		for _, c := range silent {
			c.Close()
		}
	}()
	inW.Write([]byte("b\n"))
	<-out.got
	inW.Close()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if n := drops.Load(); n != 0 || out.buf.String() != "a\nb\n" {
		t.Fatalf("the attached Runner saw %d drops and stdout %q, want none and \"a\\nb\\n\"", n, out.buf.String())
	}
}

// identityKey is the encoding of the identity point: an Ed25519 public
// key of small order, for which crypto/ed25519 accepts forgedSig on every
// message.
var (
	identityKey = ed25519.PublicKey(append([]byte{1}, make([]byte, 31)...))
	forgedSig   = append([]byte{1}, make([]byte, 63)...)
)

// forgedSigner "signs" for identityKey without any private key.
type forgedSigner struct{}

func (forgedSigner) Public() crypto.PublicKey { return identityKey }
func (forgedSigner) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) {
	return bytes.Clone(forgedSig), nil
}

// A peer can complete its side of a TLS 1.3 handshake with the identity
// point as its key and no private key at all (Go's verifier accepts the
// forged CertificateVerify). The wire's strict key admission refuses such
// a key: as a pin in NewKeys, and as a peer in the handshake.
func TestSmallOrderKeyRefused(t *testing.T) {
	if !ed25519.Verify(identityKey, []byte("anything"), forgedSig) {
		t.Skip("crypto/ed25519 no longer accepts the forgery; nothing to defend")
	}
	der, err := x509.MarshalPKIXPublicKey(identityKey)
	if err != nil {
		t.Fatal(err)
	}
	pin := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	if _, err := NewKeys(providerKeyPEM, pin); !errors.Is(err, signing.CodeKeySmallOrder) {
		t.Fatalf("NewKeys pinning the identity point = %v, want %s", err, signing.CodeKeySmallOrder)
	}

	var started atomic.Int32
	addr := startServer(t, &Server{Command: countingCommand(&started, "cat")})
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotAfter: time.Now().Add(time.Hour)}
	certDER, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, identityKey, forgedSigner{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := runnerKeys.tlsConfig(false)
	cfg.VerifyConnection = nil
	cfg.Certificates = []tls.Certificate{{Certificate: [][]byte{certDER}, PrivateKey: forgedSigner{}}}
	c, err := tls.Dial("tcp", addr, cfg)
	if err == nil {
		typ, err := openOver(c)
		c.Close()
		if err == nil {
			t.Fatalf("a forged identity-key client got a %v frame back", typ)
		}
		t.Logf("forged client: handshake done on its side; then %v", err)
	}
	if n := started.Load(); n != 0 {
		t.Fatalf("%d processes started", n)
	}
}

// A man in the middle who answers one redial with a key the Runner does
// not pin (or a forged plaintext TLS alert) must not end a Run that
// already reached the real provider: that failure is unauthenticated, so
// it counts as a drop and the Runner redials within ReconnectWithin,
// sending nothing to the impostor. (Before the first attach it stays
// final: that is a misconfiguration to report at once.)
func TestImpostorOnARedialIsADrop(t *testing.T) {
	real := startServer(t, &Server{Command: command("cat")})
	var started atomic.Int32
	impostor := startServer(t, &Server{Command: countingCommand(&started, "cat"), Keys: mustKeys(strangerKeyPEM, runnerPubPEM)})
	var mu sync.Mutex
	var dials int
	var first net.Conn
	inR, inW := io.Pipe()
	out := &lineWaiter{got: make(chan struct{}, 16)}
	r := &Runner{Keys: runnerKeys, Stdin: inR, Stdout: out,
		Dial: func(ctx context.Context) (net.Conn, error) {
			mu.Lock()
			dials++
			n := dials
			mu.Unlock()
			addr := real
			if n == 2 {
				addr = impostor
			}
			c, err := dialer(addr)(ctx)
			if n == 1 {
				mu.Lock()
				first = c
				mu.Unlock()
			}
			return c, err
		},
	}
	ran := make(chan error, 1)
	go func() { _, err := r.Run(testCtx(t)); ran <- err }()
	inW.Write([]byte("a\n"))
	<-out.got
	mu.Lock()
	first.Close() // the drop; the next dial reaches the impostor
	mu.Unlock()
	inW.Write([]byte("b\n"))
	select {
	case <-out.got:
	case err := <-ran:
		t.Fatalf("Run() = %v after an impostor answered a redial, want it to redial", err)
	}
	inW.Close()
	if err := <-ran; err != nil || out.buf.String() != "a\nb\n" {
		t.Fatalf("Run() = %v, stdout %q", err, out.buf.String())
	}
	if n := started.Load(); n != 0 {
		t.Fatalf("the impostor started %d processes", n)
	}
}

// Keys and InsecureNoAuth together are a contradiction; rather than let
// the insecure choice silently win over the Keys a caller set, both
// sides refuse it.
func TestKeysWithInsecureNoAuthRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if err := (&Server{Command: command("cat"), Keys: providerKeys, InsecureNoAuth: true}).Serve(ln); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Fatalf("Serve with Keys and InsecureNoAuth = %v, want %s", err, checkfu.CodeConfigInvalid)
	}
	addr := startServer(t, &Server{Command: command("cat"), InsecureNoAuth: true})
	r := &Runner{Keys: runnerKeys, InsecureNoAuth: true, Dial: dialer(addr), Stdin: strings.NewReader("x\n")}
	if _, err := r.Run(testCtx(t)); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Fatalf("Run with Keys and InsecureNoAuth = %v, want %s", err, checkfu.CodeConfigInvalid)
	}
}

// Keys never print their private key: not through any fmt verb, not
// through slog, and not when they sit by value in an unexported field of
// another struct, where fmt reaches fields by reflection and calls no
// method.
func TestKeysNeverPrintThePrivateKey(t *testing.T) {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, 32)) // runnerKeys' key
	seed := priv.Seed()
	forbidden := []string{fmt.Sprint(seed), fmt.Sprintf("%x", seed), fmt.Sprintf("%X", seed), fmt.Sprintf("%q", seed),
		fmt.Sprint([]byte(priv)), fmt.Sprintf("%x", []byte(priv)), base64.StdEncoding.EncodeToString(seed), fmt.Sprintf("%#v", seed)}
	type holder struct{ k Keys }
	var outs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%X", "%q", "%d"} {
		outs = append(outs, fmt.Sprintf(verb, runnerKeys), fmt.Sprintf(verb, *runnerKeys), fmt.Sprintf(verb, holder{*runnerKeys}), fmt.Sprintf(verb, &holder{*runnerKeys}))
	}
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("keys", "k", runnerKeys, "v", *runnerKeys, "h", holder{*runnerKeys})
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("keys", "k", runnerKeys, "v", *runnerKeys, "h", holder{*runnerKeys})
	outs = append(outs, logged.String())
	for _, out := range outs {
		for _, f := range forbidden {
			if strings.Contains(out, f) {
				t.Fatalf("the private key appears in printed Keys: %.200s", out)
			}
		}
	}
}

// Roles and instances are separated by what each side pins: the
// provider's own key cannot act as a Runner towards it, the Runner's own
// key cannot act as a provider towards it, and the Runner key of another
// instance opens nothing here.
func TestKeysOfAnotherRoleOrInstanceRefused(t *testing.T) {
	var started atomic.Int32
	addr := startServer(t, &Server{Command: countingCommand(&started, "cat")})
	otherRunnerKeyPEM, _ := testKey(4) // pinned by another instance's provider, not this one
	for name, keys := range map[string]*Keys{
		"the provider's own key as a Runner": mustKeys(providerKeyPEM, providerPubPEM),
		"another instance's Runner key":      mustKeys(otherRunnerKeyPEM, providerPubPEM),
	} {
		r := &Runner{Keys: keys, Dial: dialer(addr), Stdin: strings.NewReader("x\n"), ReconnectWithin: time.Millisecond}
		if _, err := r.Run(testCtx(t)); !errors.Is(err, CodePeerRefused) {
			t.Errorf("%s: Run() = %v, want %s", name, err, CodePeerRefused)
		}
	}
	if n := started.Load(); n != 0 {
		t.Fatalf("%d processes started", n)
	}
	// A provider holding the Runner's own key (it pins whoever connects).
	mirror := startServer(t, &Server{Command: countingCommand(&started, "cat"), Keys: mustKeys(runnerKeyPEM, runnerPubPEM)})
	r := &Runner{Keys: runnerKeys, Dial: dialer(mirror), Stdin: strings.NewReader("secret\n"), ReconnectWithin: time.Millisecond}
	if _, err := r.Run(testCtx(t)); !errors.Is(err, CodePeerRefused) {
		t.Fatalf("the Runner's own key as a provider: Run() = %v, want %s", err, CodePeerRefused)
	}
	if n := started.Load(); n != 0 {
		t.Fatalf("%d processes started", n)
	}
}

// Keys made without NewKeys (the zero value) fail closed on either side:
// no certificate to present and nothing pinned.
func TestZeroKeysFailClosed(t *testing.T) {
	var started atomic.Int32
	addr := startServer(t, &Server{Command: countingCommand(&started, "cat"), Keys: &Keys{}})
	r := &Runner{Keys: runnerKeys, Dial: dialer(addr), Stdin: strings.NewReader("x\n"), ReconnectWithin: time.Millisecond}
	if _, err := r.Run(testCtx(t)); err == nil {
		t.Fatal("a Runner reached a provider with zero Keys")
	}
	good := startServer(t, &Server{Command: countingCommand(&started, "cat")})
	r = &Runner{Keys: &Keys{}, Dial: dialer(good), Stdin: strings.NewReader("x\n"), ReconnectWithin: time.Millisecond}
	if _, err := r.Run(testCtx(t)); err == nil {
		t.Fatal("a Runner with zero Keys reached the provider")
	}
	if n := started.Load(); n != 0 {
		t.Fatalf("%d processes started", n)
	}
}

// A connection whose handshake finished just as Close ran must not start
// a process: Close has already killed what it knew of, so that process
// would run unkilled, and Close would wait for it.
func TestNoProcessStartsAfterClose(t *testing.T) {
	var started atomic.Int32
	srv := &Server{Command: countingCommand(&started, "sleep", "60"), InsecureNoAuth: true}
	cfg, err := srv.config()
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	hello := frame.Frame{Type: frame.TypeOpen, Version: frame.ProtocolVersion, ID: frame.ProcessID{3}}
	if _, _, err := srv.attach(b, &hello, cfg); err == nil {
		t.Error("attach after Close succeeded")
	}
	if n := started.Load(); n != 0 {
		srv.mu.Lock()
		srv.proc.terminate()
		srv.mu.Unlock()
		t.Fatalf("%d processes started after Close", n)
	}
}
