package wire

import (
	"bufio"
	"container/list"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire/internal/frame"
)

// Defaults for a Server, each defined once. docs/wire.md derives them
// from the bandwidth-delay product.
const (
	// DefaultOutputWindow is the default output_window_bytes: the stdout
	// journal capacity, and the most stdout a Runner may leave
	// unacknowledged before the provider stops reading the process.
	DefaultOutputWindow = 8 << 20
	// DefaultInputCredit is the default stdin credit: the most stdin the
	// provider buffers beyond the process pipe.
	DefaultInputCredit = 1 << 20
	// DefaultDetachGrace is how long a detached process keeps its
	// unacknowledged stdout (paused) before the provider resumes reading
	// and evicting, so that a Runner gone longer is refused
	// output_truncated rather than freezing the process forever.
	DefaultDetachGrace = 30 * time.Second
	// StderrQueueBytes bounds the stderr bytes queued for sending; more
	// are dropped and counted.
	StderrQueueBytes = 256 << 10
	// MinWindow is the smallest output window or input credit accepted.
	MinWindow = 4096
	// MaxWindow is the largest output window or input credit accepted.
	MaxWindow = 1 << 30
	// MaxPendingHandshakes caps the connections Serve holds that have
	// not yet authenticated and sent their first frame. A connection
	// accepted past the cap drops the oldest pending one, so peers that
	// connect and stay silent can exhaust neither the provider's
	// descriptors nor its Accept loop: to keep the Runner out, a
	// stranger must open this many connections within the time the
	// Runner's own handshake takes.
	MaxPendingHandshakes = 64
	// handshakeTimeout bounds how long a connection may take to send its
	// first frame.
	handshakeTimeout = 30 * time.Second
)

// A Server is the provider side of the wire: it runs at most one process
// at a time (the instance's reservation) and serves it to Runners over any
// number of successive connections. The zero Server is not usable: set
// Command.
type Server struct {
	// Command returns the command to run for an open. Required. The
	// Server sets its Stdin, Stdout and Stderr.
	Command func() *exec.Cmd
	// OutputWindow is output_window_bytes; zero means DefaultOutputWindow.
	OutputWindow int
	// InputCredit is the stdin credit; zero means DefaultInputCredit.
	InputCredit int
	// DetachGrace is how long a detached process's unacknowledged stdout
	// is kept (the process paused) before the provider drains the process
	// and evicts; zero means DefaultDetachGrace, negative means no grace.
	DetachGrace time.Duration
	// Keys authenticate Runners over TCP (any connection that is not a
	// Unix socket): TLS 1.3, each side proving a pinned Ed25519 key.
	// Required unless InsecureNoAuth or every connection is a Unix
	// socket, whose peer is authenticated by its uid (SO_PEERCRED: only
	// the Server's own user).
	Keys *Keys
	// InsecureNoAuth serves whoever connects, over any connection,
	// without authentication or encryption: the first peer to open owns
	// the process's stdin and stdout. Use it only where nothing but the
	// Runner can reach the listener. Setting it with Keys is refused.
	InsecureNoAuth bool

	lazyReplay bool // tests: replay the whole journal on resume

	mu     sync.Mutex  // guards every field below and the state of proc.sm
	cond   *sync.Cond  // broadcast on every state change
	proc   *serverProc // the instance's process (live, or reaped)
	prev   *serverProc // the process before proc, reaped, not yet collected
	closed bool
	conns  map[net.Conn]struct{}
	lns    []net.Listener
	done   chan struct{} // closed when a process's Runner has collected it
	wg     sync.WaitGroup
}

// serverProc is one running (or reaped, not yet collected) process.
type serverProc struct {
	sm         *provider
	cmd        *exec.Cmd
	outR, errR *os.File // the pipes' read ends, closed by Close
	conn       net.Conn // the attached connection, closed when superseded
}

func (s *Server) init() {
	if s.cond == nil {
		s.cond = sync.NewCond(&s.mu)
		s.conns = map[net.Conn]struct{}{}
		s.done = make(chan struct{})
	}
}

func (s *Server) config() (providerConfig, error) {
	cfg := providerConfig{outputWindow: s.OutputWindow, inputCredit: s.InputCredit, stderrCap: StderrQueueBytes, lazyReplay: s.lazyReplay}
	if cfg.outputWindow == 0 {
		cfg.outputWindow = DefaultOutputWindow
	}
	if cfg.inputCredit == 0 {
		cfg.inputCredit = DefaultInputCredit
	}
	for _, v := range []int{cfg.outputWindow, cfg.inputCredit} {
		if v < MinWindow || v > MaxWindow {
			return cfg, checkfu.Refuse(checkfu.CodeConfigInvalid, "wire: window of %d bytes is outside [%d, %d]", v, MinWindow, MaxWindow)
		}
	}
	if s.Command == nil {
		return cfg, checkfu.Refuse(checkfu.CodeConfigInvalid, "wire: Server.Command is nil; set it to the command to run")
	}
	if s.Keys != nil && s.InsecureNoAuth {
		return cfg, checkfu.Refuse(checkfu.CodeConfigInvalid, "wire: Server.Keys and Server.InsecureNoAuth are both set; InsecureNoAuth would ignore the Keys")
	}
	return cfg, nil
}

// Done returns a channel closed once a process has exited and its Runner
// has collected everything (sent done), or once a process the Runner
// killed has been reaped. "checkfu process serve" exits then.
func (s *Server) Done() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	return s.done
}

// Serve accepts connections on ln and serves each until Close. It returns
// the listener's error, or nil after Close. A temporary Accept error
// (EMFILE, ENFILE, ECONNABORTED, ...) does not end Serve: it retries with
// a backoff from 5 ms doubling to 1 s, as net/http does. At most
// [MaxPendingHandshakes] accepted connections may be waiting for their
// first frame; one accepted beyond that drops the oldest of them.
func (s *Server) Serve(ln net.Listener) error {
	if _, err := s.config(); err != nil {
		return err
	}
	if err := checkAuthConfig(s.Keys, s.InsecureNoAuth, ln.Addr().Network(), "Server"); err != nil {
		return err
	}
	s.mu.Lock()
	s.init()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.lns = append(s.lns, ln)
	s.mu.Unlock()
	pending := &handshakes{max: MaxPendingHandshakes}
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return nil
			}
			if !temporary(err) {
				return err
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		// Add to wg under s.mu, where Close cannot have begun its Wait:
		// a connection accepted as Close ran is closed instead.
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return nil
		}
		s.wg.Add(1)
		s.mu.Unlock()
		handshakeDone := pending.add(c)
		go func() {
			defer s.wg.Done()
			s.serveConn(c, handshakeDone)
		}()
	}
}

// handshakes holds the connections one Serve accepted that have not yet
// finished their handshake, oldest first, and drops the oldest when
// there are more than max.
type handshakes struct {
	max int
	mu  sync.Mutex // guards l
	l   list.List  // of net.Conn
}

// add registers c, closing the oldest pending connection if that makes
// more than h.max, and returns the function that retires c once its
// handshake is over either way (safe to call more than once).
func (h *handshakes) add(c net.Conn) (done func()) {
	h.mu.Lock()
	e := h.l.PushBack(c)
	var oldest net.Conn
	if h.l.Len() > h.max {
		oldest = h.l.Remove(h.l.Front()).(net.Conn)
	}
	h.mu.Unlock()
	if oldest != nil {
		oldest.Close() // its handshake fails and its goroutine ends
	}
	return func() {
		h.mu.Lock()
		h.l.Remove(e) // a no-op once removed
		h.mu.Unlock()
	}
}

// temporary reports whether an Accept error is worth retrying: a net.Error
// that says it is temporary (the test net/http applies), or a resource
// exhaustion or aborted connection reported by the kernel.
func temporary(err error) bool {
	if errors.Is(err, net.ErrClosed) {
		return false
	}
	var t interface{ Temporary() bool }
	if errors.As(err, &t) && t.Temporary() {
		return true
	}
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED, syscall.ECONNRESET} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Close kills the process, closes listeners and connections, and waits
// for the Server's goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	s.init()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for _, ln := range s.lns {
		ln.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	if p := s.proc; p != nil {
		if !p.sm.reaped {
			p.terminate()
		}
		// Unblock the pipe readers even if a descendant that escaped the
		// process group still holds the pipes.
		p.outR.Close()
		p.errR.Close()
	}
	s.cond.Broadcast()
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

// terminate kills the process and its process group.
func (p *serverProc) terminate() {
	if p.cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		p.cmd.Process.Kill()
	}
}

// ServeConn serves one connection until it ends: authentication (TLS with
// Keys, or the peer's uid on a Unix socket, unless InsecureNoAuth), the
// open or resume handshake, then frames both ways. It closes c.
func (s *Server) ServeConn(c net.Conn) { s.serveConn(c, func() {}) }

// serveConn is ServeConn; handshakeDone is called once the first frame
// has arrived or the connection has failed before it. A connection goes
// through three states: the handshake (authentication and the first
// frame), attached (frames both ways), and detached (the grace after
// which a process whose Runner is gone drains and evicts).
func (s *Server) serveConn(raw net.Conn, handshakeDone func()) {
	defer handshakeDone()
	defer raw.Close()
	cfg, err := s.config()
	if err != nil || !s.track(raw) {
		return
	}
	defer s.untrack(raw)
	c, hello, ok := s.handshake(raw, handshakeDone)
	if !ok {
		return
	}
	defer c.Close()
	p, epoch, err := s.attach(c, &hello, cfg)
	if err != nil {
		writeRefusal(c, err)
		return
	}
	writerDone := s.serveAttached(c, p, epoch)
	s.detached(p, epoch)
	c.Close()
	<-writerDone
}

// track registers c for Close; it reports false once the Server is
// closed.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// handshake authenticates raw and reads its first frame, both within
// handshakeTimeout, and calls handshakeDone once it is over either way.
// It returns the connection to speak the wire on and the first frame, or
// false after refusing (or dropping) the peer.
func (s *Server) handshake(raw net.Conn, handshakeDone func()) (net.Conn, frame.Frame, bool) {
	defer handshakeDone()
	raw.SetDeadline(time.Now().Add(handshakeTimeout))
	c, err := s.authServer(raw)
	if err != nil {
		if code, ok := checkfu.CodeOf(err); ok && code == CodePeerRefused && isUnix(raw) {
			writeRefusal(raw, err)
		}
		return nil, frame.Frame{}, false
	}
	// The first frame comes from a peer that has named no process yet:
	// read it unbuffered and refuse, at its header, a payload larger than
	// the largest open or resume, so that such peers cost no buffer.
	var hello frame.Frame
	if err := frame.NewBoundedDecoder(c, frame.MaxHelloPayload).Decode(&hello); err != nil {
		if code, ok := checkfu.CodeOf(err); ok && code == CodeProtocolError {
			writeRefusal(c, err)
		}
		c.Close()
		return nil, frame.Frame{}, false
	}
	c.SetDeadline(time.Time{})
	return c, hello, true
}

// serveAttached runs connection epoch of p: the writer it starts sends
// the state machine's frames while this goroutine applies the Runner's,
// until the Runner has everything (done), the connection fails, or a
// frame breaks the protocol (refused with protocol_error). It returns a
// channel closed when the writer has ended; the writer ends once the
// epoch is detached.
func (s *Server) serveAttached(c net.Conn, p *serverProc, epoch uint64) (writerDone <-chan struct{}) {
	wd := make(chan struct{})
	go func() {
		defer close(wd)
		s.writeLoop(c, p, epoch)
	}()
	dec := frame.NewDecoder(bufio.NewReaderSize(c, 64<<10))
	var f frame.Frame
	for {
		err := dec.Decode(&f)
		done := false
		if err == nil {
			s.mu.Lock()
			err = p.sm.handle(epoch, &f)
			s.applyKill(p)
			if done = p.sm.runDone; done {
				s.closeDone()
			}
			s.cond.Broadcast()
			s.mu.Unlock()
		}
		if err != nil {
			if code, ok := checkfu.CodeOf(err); ok && code == CodeProtocolError {
				s.failConn(c, p, epoch, err, wd)
			}
			return wd // otherwise a drop: the process waits for a resume
		}
		if done {
			return wd // the Runner has everything; the connection ends
		}
	}
}

// detached ends connection epoch of p. If no other connection took the
// process over, its unacknowledged stdout is kept (the process paused)
// for DetachGrace, after which the provider drains and evicts.
func (s *Server) detached(p *serverProc, epoch uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p.sm.detach(epoch)
	defer s.cond.Broadcast()
	stillDetached := func() bool { return p.sm.epoch == epoch && !p.sm.attached && !s.closed }
	if !stillDetached() || p.sm.reaped {
		return
	}
	grace := s.DetachGrace
	if grace == 0 {
		grace = DefaultDetachGrace
	}
	if grace < 0 {
		p.sm.evicting = true
		return
	}
	time.AfterFunc(grace, func() {
		s.mu.Lock()
		if stillDetached() {
			p.sm.evicting = true
			s.cond.Broadcast()
		}
		s.mu.Unlock()
	})
}

// failConn queues a fatal protocol_error refusal for the Runner and gives
// the writer a bounded time to send it before the connection closes.
func (s *Server) failConn(c net.Conn, p *serverProc, epoch uint64, err error, writerDone <-chan struct{}) {
	var r *checkfu.Refusal
	errors.As(err, &r)
	s.mu.Lock()
	if p.sm.epoch == epoch {
		p.sm.conn.fatal = &frame.Frame{Type: frame.TypeRefuse, Code: r.Code, Message: refusalMessage(r.Message)}
	}
	s.cond.Broadcast()
	s.mu.Unlock()
	t := time.AfterFunc(5*time.Second, func() { c.Close() })
	defer t.Stop()
	<-writerDone
}

// refusalMessage cuts msg to the refuse frame's bound, on a UTF-8
// character boundary. The bound is the frame format's, not a quoting
// rule: the Runner quotes what it receives.
func refusalMessage(msg string) string {
	if len(msg) <= frame.MaxRefusalMessage {
		return msg
	}
	cut := frame.MaxRefusalMessage
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut]
}

func (s *Server) closeDone() {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
}

// applyKill terminates the process when the state machine asked for it.
// s.mu must be held.
//
// It also closes the read ends of stdout and stderr: output of a process
// being killed is never served, and a descendant that left the process
// group (setsid) and holds the pipes would otherwise keep the readers,
// and so the reaping of the process and the instance's reservation,
// alive for as long as it likes.
func (s *Server) applyKill(p *serverProc) {
	if p.sm.kill && !p.sm.reaped {
		p.terminate()
		p.outR.Close()
		p.errR.Close()
	}
}

// attach handles the handshake frame: open starts the process (or, for a
// retried open of the same ID, resumes it from cursor 0); resume attaches
// to the held process at the Runner's cursor.
func (s *Server) attach(c net.Conn, hello *frame.Frame, cfg providerConfig) (*serverProc, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		// Close has already killed the process it knew of; one started
		// now would run unkilled, and Close would wait for it.
		return nil, 0, net.ErrClosed
	}
	cursor := hello.Offset
	var p *serverProc
	switch hello.Type {
	case frame.TypeOpen:
		if hello.Version != frame.ProtocolVersion {
			return nil, 0, protocolErr("protocol version %d, this provider speaks %d", hello.Version, frame.ProtocolVersion)
		}
		cursor = 0
		if p = s.lookup(hello.ID); p != nil {
			break // a retried open: resume from the start
		}
		// The reservation: one live process per instance, released
		// only when the process is reaped.
		if s.proc != nil && !s.proc.sm.reaped {
			return nil, 0, checkfu.Refuse(CodeProcessAlreadyOpen, "wire: this instance already runs a process; resume it or wait until it is reaped")
		}
		np, err := s.start(hello.ID, cfg)
		if err != nil {
			return nil, 0, err
		}
		if old := s.proc; old != nil && !old.sm.runDone && !old.sm.killedByRunner {
			s.prev = old // reaped but not yet collected: its Runner may still resume
		}
		s.proc, p = np, np
	case frame.TypeResume:
		if p = s.lookup(hello.ID); p == nil {
			return nil, 0, checkfu.Refuse(CodeProcessUnknown, "wire: no process with that id; open a new one")
		}
	default:
		return nil, 0, protocolErr("first frame is %v, want open or resume", hello.Type)
	}
	epoch, err := p.sm.attach(cursor)
	s.applyKill(p)
	if err != nil {
		return nil, 0, err
	}
	if p.conn != nil {
		p.conn.Close() // superseded by this connection
	}
	p.conn = c
	s.cond.Broadcast()
	return p, epoch, nil
}

// lookup returns the held process with the given id: the current one, or
// the previous one, reaped but not yet collected by its Runner. s.mu must
// be held.
func (s *Server) lookup(id frame.ProcessID) *serverProc {
	for _, p := range []*serverProc{s.proc, s.prev} {
		if p != nil && p.sm.id == id {
			return p
		}
	}
	return nil
}

// start runs the command with three pipes and the goroutines that move
// bytes between the pipes and the state machine. s.mu must be held.
func (s *Server) start(id frame.ProcessID, cfg providerConfig) (*serverProc, error) {
	cmd := s.Command()
	if cmd == nil {
		return nil, checkfu.Refuse(CodeProcessStartFailed, "wire: Server.Command returned nil")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, checkfu.Refuse(CodeProcessStartFailed, "wire: %v", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, checkfu.Refuse(CodeProcessStartFailed, "wire: %v", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, checkfu.Refuse(CodeProcessStartFailed, "wire: %v", err)
	}
	growPipe(inW)
	growPipe(outR)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if cmd.SysProcAttr == nil {
		// Its own process group, so that a kill reaches the whole tree
		// (npx, sh -c, ...), not only the direct child.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	err = cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, checkfu.Refuse(CodeProcessStartFailed, "wire: starting %q: %v", cmd.Path, err)
	}
	p := &serverProc{sm: newProvider(id, cfg), cmd: cmd, outR: outR, errR: errR}
	var readers sync.WaitGroup
	readers.Add(2)
	s.wg.Add(4)
	go func() { defer s.wg.Done(); s.stdinLoop(p, inW) }()
	go func() { defer s.wg.Done(); defer readers.Done(); s.stdoutLoop(p, outR) }()
	go func() { defer s.wg.Done(); defer readers.Done(); s.stderrLoop(p, errR) }()
	go func() {
		defer s.wg.Done()
		err := cmd.Wait()
		status := exitStatus(cmd.ProcessState, err)
		readers.Wait() // exit goes out after the pipes' ends
		s.mu.Lock()
		p.sm.exited(status)
		if p.sm.killedByRunner {
			s.closeDone() // nobody will collect it
		}
		s.cond.Broadcast()
		s.mu.Unlock()
	}()
	return p, nil
}

// exitStatus maps a process state to the exit frame's status: the exit
// code, or 128+signal for a process killed by a signal.
func exitStatus(ps *os.ProcessState, err error) int32 {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int32(ws.Signal())
	}
	return int32(ps.ExitCode())
}

func (s *Server) stdinLoop(p *serverProc, w *os.File) {
	defer w.Close()
	buf := make([]byte, 256<<10)
	for {
		s.mu.Lock()
		var n int
		var closePipe bool
		for {
			n, closePipe = p.sm.stdinPending(buf)
			if n > 0 || closePipe || p.sm.stdinBroken || p.sm.reaped || s.closed {
				break
			}
			s.cond.Wait()
		}
		stop := n == 0 // closePipe, broken, reaped or closed
		s.mu.Unlock()
		if stop {
			return
		}
		written, err := w.Write(buf[:n])
		s.mu.Lock()
		if err != nil {
			p.sm.stdinFailed()
		} else {
			p.sm.stdinWrote(written)
		}
		s.cond.Broadcast()
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (s *Server) stdoutLoop(p *serverProc, r *os.File) {
	defer r.Close()
	buf := make([]byte, 1<<20)
	for {
		s.mu.Lock()
		room := p.sm.outRoom(len(buf))
		for room == 0 && !s.closed {
			s.cond.Wait()
			room = p.sm.outRoom(len(buf))
		}
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return
		}
		n, err := r.Read(buf[:room])
		s.mu.Lock()
		p.sm.appendOut(buf[:n])
		if err != nil {
			p.sm.outEOF = true
		}
		s.cond.Broadcast()
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (s *Server) stderrLoop(p *serverProc, r *os.File) {
	defer r.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		s.mu.Lock()
		p.sm.appendErr(buf[:n])
		if err != nil {
			p.sm.errEOF = true
		}
		s.cond.Broadcast()
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// writeLoop sends the state machine's frames for epoch until the epoch
// ends or a fatal refusal went out, then closes c.
func (s *Server) writeLoop(c net.Conn, p *serverProc, epoch uint64) {
	writeLoop(c, frameSource{
		mu:   &s.mu,
		cond: s.cond,
		next: func(buf []byte) (frame.Frame, bool, bool) {
			if s.closed || p.sm.epoch != epoch || !p.sm.attached {
				return frame.Frame{}, false, true
			}
			f, ok := p.sm.next(epoch, buf)
			if ok {
				s.applyKill(p)
			}
			return f, ok, false
		},
		// A fatal refusal ends the connection.
		last: func(f *frame.Frame) bool { return f.Type == frame.TypeRefuse && f.Code != CodeInputBufferFull },
	})
	c.Close()
}

// writeRefusal sends a refusal frame on a connection about to close.
func writeRefusal(c net.Conn, err error) {
	var r *checkfu.Refusal
	if !errors.As(err, &r) {
		r = checkfu.Refuse(CodeProtocolError, "wire: %v", err)
	}
	b, e := frame.Append(nil, &frame.Frame{Type: frame.TypeRefuse, Code: r.Code, Message: refusalMessage(r.Message)})
	if e != nil {
		return
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write(b)
	if tc, ok := c.(interface{ CloseWrite() error }); ok {
		tc.CloseWrite()
	}
	io.Copy(io.Discard, io.LimitReader(c, 1<<16)) // let the peer read it before the reset
}
