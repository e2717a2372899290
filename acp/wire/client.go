package wire

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire/internal/frame"
)

// DefaultReconnectWithin is how long a Runner keeps redialling after a
// dropped connection before it gives up.
const DefaultReconnectWithin = 30 * time.Second

// DefaultStdinBuffer is the default of [Runner.StdinBuffer].
const DefaultStdinBuffer = 8 << 20

// killGrace bounds how long a cancelled Runner waits to send kill.
const killGrace = 5 * time.Second

// A Runner is the runner side of the wire: it opens the instance's
// process through a Server, copies Stdin to the process within the
// granted credit, delivers the process's stdout exactly once and in order
// to Stdout, and reconnects by itself after a dropped connection,
// resuming both directions. The zero Runner is not usable: set Dial.
type Runner struct {
	// Dial opens a connection to the provider. Required.
	Dial func(ctx context.Context) (net.Conn, error)
	// Stdin is copied to the process; nil means empty stdin. It is read
	// only as far as the credit window allows. EOF, or any read error,
	// ends the process's stdin. When Run returns, a Read blocked on
	// Stdin may still be outstanding; it is abandoned and its bytes are
	// discarded.
	Stdin io.Reader
	// Stdout receives the process's stdout exactly once, in order; nil
	// discards it.
	Stdout io.Writer
	// Stderr receives the process's stderr, best effort; nil discards it.
	Stderr io.Writer
	// Keys authenticate the provider over TCP (any connection Dial
	// returns that is not a Unix socket): TLS 1.3, each side proving a
	// pinned Ed25519 key. Required unless InsecureNoAuth or Dial returns
	// Unix sockets, whose provider is authenticated by its uid
	// (SO_PEERCRED: only the Runner's own user).
	Keys *Keys
	// InsecureNoAuth speaks the wire on whatever Dial returns, without
	// authenticating the provider or encrypting: anyone on the path can
	// read stdout and write stdin. Setting it with Keys is refused.
	InsecureNoAuth bool
	// StdinBuffer bounds the stdin the Runner holds that the provider has
	// not yet accepted (kept for resending after a drop), whatever credit
	// the provider grants; zero means DefaultStdinBuffer. A provider's
	// input credit above it only slows stdin to StdinBuffer per round
	// trip. Allowed range MinWindow .. MaxWindow.
	StdinBuffer int
	// ReconnectWithin bounds how long the Runner redials after a drop;
	// zero means DefaultReconnectWithin.
	ReconnectWithin time.Duration
	// Logf, when set, receives one line per dropped connection and
	// reconnect.
	Logf func(format string, args ...any)

	stderrDropped atomic.Uint64
}

// StderrDropped returns how many stderr bytes the provider dropped during
// the last Run (its queue was full); stderr is best effort.
func (r *Runner) StderrDropped() uint64 { return r.stderrDropped.Load() }

// A DisconnectedError reports that the Runner gave up redialling. It is a
// failure, not a refusal: the process may still be running.
type DisconnectedError struct {
	Err error // the last dial or connection error
}

// Error returns "wire: connection lost: CAUSE".
func (e *DisconnectedError) Error() string { return "wire: connection lost: " + e.Err.Error() }

// Unwrap returns the last dial or connection error.
func (e *DisconnectedError) Unwrap() error { return e.Err }

// A localError is a failure on the Runner's own side (its Stdout): it
// ends Run instead of triggering a reconnect.
type localError struct{ err error }

func (e localError) Error() string { return e.err.Error() }

// run is one Run's shared state.
type run struct {
	r    *Runner
	mu   sync.Mutex // guards st and the flags below
	cond *sync.Cond
	st   runnerState
	gen  uint64 // connection generation; bumped on every drop
	stop bool   // Run is returning or ctx was cancelled
}

// Run opens the process and runs it to completion. It returns the exit
// status once the process has exited and all of its stdout has been
// delivered. Refusals (output_truncated, process_already_open, ...) are
// returned as *checkfu.Refusal; giving up on reconnecting as
// *DisconnectedError; ctx cancellation as ctx.Err(). Cancelling ctx also
// asks the provider, best effort, to terminate the process (a kill frame
// on the live connection); a dropped connection never does.
func (r *Runner) Run(ctx context.Context) (status int, err error) {
	ru, err := r.newRun()
	if err != nil {
		return -1, err
	}
	defer ru.end()
	defer context.AfterFunc(ctx, ru.cancel)()
	if r.Stdin == nil {
		ru.st.closeStdin()
	} else {
		go ru.pumpStdin()
	}
	return ru.connections(ctx)
}

// newRun checks r's configuration and returns the state of one Run, with
// a fresh random process id.
func (r *Runner) newRun() (*run, error) {
	if r.Dial == nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "wire: Runner.Dial is nil; set it to dial the provider")
	}
	stdinCap := r.StdinBuffer
	if stdinCap == 0 {
		stdinCap = DefaultStdinBuffer
	}
	if r.Keys != nil && r.InsecureNoAuth {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "wire: Runner.Keys and Runner.InsecureNoAuth are both set; InsecureNoAuth would ignore the Keys")
	}
	if stdinCap < MinWindow || stdinCap > MaxWindow {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "wire: Runner.StdinBuffer of %d bytes is outside [%d, %d]", stdinCap, MinWindow, MaxWindow)
	}
	ru := &run{r: r}
	ru.st.stdinCap = uint64(stdinCap)
	ru.cond = sync.NewCond(&ru.mu)
	r.stderrDropped.Store(0)
	if _, err := rand.Read(ru.st.id[:]); err != nil {
		return nil, err
	}
	return ru, nil
}

// end stops every goroutine of the Run as it returns.
func (ru *run) end() {
	ru.mu.Lock()
	ru.stop = true
	ru.cond.Broadcast()
	ru.mu.Unlock()
}

// cancel handles the cancellation of Run's context, the caller's intent
// to stop: it asks the provider to terminate the process (best effort, on
// a live connection) and stops the Run.
func (ru *run) cancel() {
	ru.mu.Lock()
	ru.stop = true
	ru.st.killPending = !ru.st.exited
	ru.cond.Broadcast()
	ru.mu.Unlock()
}

// connections dials and serves connections until the process is
// collected, a refusal, a local failure, cancellation, or no connection
// for ReconnectWithin. The first redial after a working connection drops
// goes out at once, then 10 ms doubling to 1 s.
func (ru *run) connections(ctx context.Context) (int, error) {
	within := ru.r.ReconnectWithin
	if within == 0 {
		within = DefaultReconnectWithin
	}
	lostAt := time.Now()
	backoff := time.Duration(0)
	for {
		if err := sleepCtx(ctx, backoff); err != nil {
			return -1, err
		}
		progressed, err := ru.connect(ctx)
		if final, status, err := ru.outcome(ctx, err); final {
			return status, err
		}
		if progressed {
			// A working connection dropped: the budget restarts and the
			// first redial goes out at once.
			lostAt, backoff = time.Now(), -1
		}
		if time.Since(lostAt) > within {
			return -1, &DisconnectedError{Err: err}
		}
		if ru.r.Logf != nil {
			ru.r.Logf("wire: connection lost (%v); reconnecting", err)
		}
		if backoff < 0 {
			backoff = 0
		} else {
			backoff = min(max(2*backoff, 10*time.Millisecond), time.Second)
		}
	}
}

// sleepCtx waits d (nothing when d <= 0) unless ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil || d <= 0 {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// connect dials once and serves the connection; progressed reports
// whether its handshake succeeded.
func (ru *run) connect(ctx context.Context) (progressed bool, err error) {
	conn, err := ru.r.Dial(ctx)
	if err != nil {
		return false, err
	}
	return ru.serve(ctx, conn)
}

// outcome sorts the end of one connection: final reports whether Run
// returns (with status and err): the process was collected, a local
// failure, a refusal, or cancellation. Anything else is a drop to redial.
func (ru *run) outcome(ctx context.Context, err error) (final bool, status int, _ error) {
	var local localError
	switch {
	case err == nil:
		ru.mu.Lock()
		defer ru.mu.Unlock()
		return true, int(ru.st.status), nil
	case errors.As(err, &local):
		return true, -1, local.err
	case ctx.Err() != nil:
		return true, -1, ctx.Err()
	}
	if _, ok := checkfu.CodeOf(err); ok {
		return true, -1, err
	}
	return false, -1, nil
}

// serve runs one connection until the process is collected (nil), a
// refusal, or a connection error. progressed reports whether the
// handshake succeeded (so the reconnect budget restarts).
func (ru *run) serve(ctx context.Context, raw net.Conn) (progressed bool, err error) {
	defer raw.Close()
	conn, gen, err := ru.handshake(ctx, raw)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	// On cancellation the writer sends kill and closes conn; close it
	// regardless after killGrace.
	// (Closing an already closed conn is harmless.)
	stopCancel := context.AfterFunc(ctx, func() { time.AfterFunc(killGrace, func() { conn.Close() }) })
	defer stopCancel()

	writerDone := make(chan error, 1)
	go func() { writerDone <- ru.writeLoop(conn, gen) }()
	defer func() {
		ru.mu.Lock()
		ru.st.detach()
		ru.gen++
		ru.cond.Broadcast()
		ru.mu.Unlock()
		conn.Close()
		<-writerDone
	}()
	return ru.readLoop(ctx, conn, writerDone)
}

// handshake authenticates raw and sends the connection's first frame
// (open, or resume at the stdout cursor). It returns the connection to
// speak the wire on and its generation.
func (ru *run) handshake(ctx context.Context, raw net.Conn) (net.Conn, uint64, error) {
	conn, err := ru.r.authRunner(ctx, raw)
	if err != nil {
		ru.mu.Lock()
		opened := ru.st.opened
		ru.mu.Unlock()
		if opened && errors.Is(err, CodePeerRefused) {
			// This Run already reached the real provider, and nothing
			// on this connection proved to come from it (a key it does
			// not hold, a plaintext alert, a socket of another user):
			// whoever answered cannot end the Run; it is a drop.
			return nil, 0, fmt.Errorf("wire: an unauthenticated peer answered the redial: %s", err.Error())
		}
		return nil, 0, err
	}
	ru.mu.Lock()
	hello := ru.st.hello()
	gen := ru.gen
	ru.mu.Unlock()
	b, err := frame.Append(nil, &hello)
	if err == nil {
		_, err = conn.Write(b)
	}
	if err != nil {
		conn.Close()
		return nil, 0, err
	}
	return conn, gen, nil
}

// readLoop applies the provider's frames and delivers stdout and stderr
// until the Runner has everything and the writer has sent done (nil), a
// refusal, or a connection error. progressed reports whether the
// attached frame arrived.
func (ru *run) readLoop(ctx context.Context, conn net.Conn, writerDone chan error) (progressed bool, err error) {
	dec := frame.NewDecoder(bufio.NewReaderSize(conn, 64<<10))
	var f frame.Frame
	for {
		if err := dec.Decode(&f); err != nil {
			return ru.readFailed(progressed, err)
		}
		ru.mu.Lock()
		d, err := ru.st.handle(&f)
		progressed = progressed || ru.st.attached
		ru.r.stderrDropped.Store(ru.st.errDropped)
		ru.cond.Broadcast()
		finished := err == nil && ru.st.finished()
		ru.mu.Unlock()
		if err == nil {
			err = ru.deliver(d)
		}
		if err != nil {
			return progressed, err
		}
		if finished {
			// The writer sends done and returns; then we are finished.
			select {
			case err := <-writerDone:
				writerDone <- err
				return true, err
			case <-ctx.Done():
				return progressed, ctx.Err()
			}
		}
	}
}

// readFailed sorts a read error: a TLS alert before attached is the
// provider refusing this Runner's key, an end after done is the finish,
// anything else a drop.
func (ru *run) readFailed(progressed bool, err error) (bool, error) {
	if !progressed && refusedByPeer(err) {
		// TLS 1.3 lets the client finish its handshake before the
		// provider has checked the client's key: its refusal arrives as
		// an alert on the first read.
		return false, checkfu.Refuse(CodePeerRefused, "wire: the provider refused this Runner's key (%v)", err)
	}
	ru.mu.Lock()
	finished := ru.st.finished() && ru.st.doneSent // the provider closed after our done
	ru.mu.Unlock()
	if finished {
		return true, nil
	}
	return progressed, err
}

// deliver hands one frame's stdout and stderr to the caller. A stdout
// write failure is local and final: reconnecting would skip those bytes.
func (ru *run) deliver(d delivery) error {
	if len(d.stdout) > 0 && ru.r.Stdout != nil {
		if _, err := ru.r.Stdout.Write(d.stdout); err != nil {
			return localError{fmt.Errorf("wire: writing stdout: %w", err)}
		}
	}
	if len(d.stderr) > 0 && ru.r.Stderr != nil {
		ru.r.Stderr.Write(d.stderr) // best effort
	}
	return nil
}

// writeLoop sends the state machine's frames on conn for connection
// generation gen. It returns after sending done, on a write error (closing
// conn), or when the generation ends; when Run is stopping it closes conn
// once the kill, if any, went out.
func (ru *run) writeLoop(conn net.Conn, gen uint64) error {
	var stopped bool
	err := writeLoop(conn, frameSource{
		mu:   &ru.mu,
		cond: ru.cond,
		next: func(buf []byte) (frame.Frame, bool, bool) {
			if ru.gen != gen || (ru.stop && !ru.st.killPending) {
				stopped = ru.stop
				return frame.Frame{}, false, true
			}
			f, ok := ru.st.next(buf)
			if ok {
				ru.cond.Broadcast()
			}
			return f, ok, false
		},
		last: func(f *frame.Frame) bool { return f.Type == frame.TypeDone },
	})
	if err != nil || stopped {
		conn.Close()
	}
	if stopped {
		return nil
	}
	ru.mu.Lock()
	ru.cond.Broadcast()
	ru.mu.Unlock()
	return err
}

// pumpStdin copies Stdin into the state machine, reading only as much as
// the credit window allows. Its wait wakes on a grant, a drop, the
// process's exit, the end of stdin, and cancellation.
func (ru *run) pumpStdin() {
	buf := make([]byte, 64<<10)
	for {
		ru.mu.Lock()
		room := ru.st.stdinRoom()
		for room == 0 && !ru.stop && !ru.st.exited && !ru.st.srcEOF {
			ru.cond.Wait()
			room = ru.st.stdinRoom()
		}
		quit := ru.stop || ru.st.exited || ru.st.srcEOF
		ru.mu.Unlock()
		if quit {
			return
		}
		n, err := ru.r.Stdin.Read(buf[:min(room, len(buf))])
		ru.mu.Lock()
		if ru.stop || ru.st.exited {
			ru.mu.Unlock()
			return
		}
		ru.st.addStdin(buf[:n])
		if err != nil {
			ru.st.closeStdin() // io.EOF or a read error both end stdin
		}
		ru.cond.Broadcast()
		ru.mu.Unlock()
		if err != nil {
			return
		}
	}
}
