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
	// read stdout and write stdin.
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
	if r.Dial == nil {
		return -1, checkfu.Refuse(checkfu.CodeConfigInvalid, "wire: Runner.Dial is nil; set it to dial the provider")
	}
	stdinCap := r.StdinBuffer
	if stdinCap == 0 {
		stdinCap = DefaultStdinBuffer
	}
	if stdinCap < MinWindow || stdinCap > MaxWindow {
		return -1, checkfu.Refuse(checkfu.CodeConfigInvalid, "wire: Runner.StdinBuffer of %d bytes is outside [%d, %d]", stdinCap, MinWindow, MaxWindow)
	}
	ru := &run{r: r}
	ru.st.stdinCap = uint64(stdinCap)
	ru.cond = sync.NewCond(&ru.mu)
	r.stderrDropped.Store(0)
	if _, err := rand.Read(ru.st.id[:]); err != nil {
		return -1, err
	}
	defer func() {
		ru.mu.Lock()
		ru.stop = true
		ru.cond.Broadcast()
		ru.mu.Unlock()
	}()
	stopWatch := context.AfterFunc(ctx, func() {
		ru.mu.Lock()
		ru.stop = true
		// Cancellation is the caller's intent to stop: ask the provider
		// to terminate the process (best effort, on a live connection).
		ru.st.killPending = !ru.st.exited
		ru.cond.Broadcast()
		ru.mu.Unlock()
	})
	defer stopWatch()
	if r.Stdin == nil {
		ru.st.closeStdin()
	} else {
		go ru.pumpStdin()
	}
	within := r.ReconnectWithin
	if within == 0 {
		within = DefaultReconnectWithin
	}
	var lastErr error
	lostAt := time.Now()
	backoff := time.Duration(0)
	for {
		if err := ctx.Err(); err != nil {
			return -1, err
		}
		if backoff > 0 {
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return -1, ctx.Err()
			case <-t.C:
			}
		}
		conn, err := r.Dial(ctx)
		if err == nil {
			var progressed bool
			progressed, err = ru.serve(ctx, conn)
			if err == nil {
				ru.mu.Lock()
				status := int(ru.st.status)
				ru.mu.Unlock()
				return status, nil
			}
			var local localError
			if errors.As(err, &local) {
				return -1, local.err
			}
			if _, ok := checkfu.CodeOf(err); ok || ctx.Err() != nil {
				if ctx.Err() != nil {
					return -1, ctx.Err()
				}
				return -1, err
			}
			if progressed {
				// A working connection dropped: the budget restarts and
				// the first redial goes out at once.
				lostAt, backoff = time.Now(), -1
			}
		}
		lastErr = err
		if time.Since(lostAt) > within {
			return -1, &DisconnectedError{Err: lastErr}
		}
		if r.Logf != nil {
			r.Logf("wire: connection lost (%v); reconnecting", err)
		}
		if backoff < 0 {
			backoff = 0
		} else {
			backoff = min(max(2*backoff, 10*time.Millisecond), time.Second)
		}
	}
}

// serve runs one connection until the process is collected (nil), a
// refusal, or a connection error. progressed reports whether the
// handshake succeeded (so the reconnect budget restarts).
func (ru *run) serve(ctx context.Context, conn net.Conn) (progressed bool, err error) {
	defer conn.Close()
	if !ru.r.InsecureNoAuth && ru.r.Keys == nil && !isUnix(conn) {
		return false, checkAuthConfig(nil, false, conn.LocalAddr().Network(), "Runner")
	}
	if conn, err = ru.r.authRunner(ctx, conn); err != nil {
		return false, err
	}
	defer conn.Close()
	ru.mu.Lock()
	hello := ru.st.hello()
	gen := ru.gen
	ru.mu.Unlock()
	b, err := frame.Append(nil, &hello)
	if err != nil {
		return false, err
	}
	if _, err := conn.Write(b); err != nil {
		return false, err
	}
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

	dec := frame.NewDecoder(bufio.NewReaderSize(conn, 64<<10))
	var f frame.Frame
	for {
		if err := dec.Decode(&f); err != nil {
			if !progressed && refusedByPeer(err) {
				// TLS 1.3 lets the client finish its handshake before
				// the provider has checked the client's key: its
				// refusal arrives as an alert on the first read.
				return false, checkfu.Refuse(CodePeerRefused, "wire: the provider refused this Runner's key (%v)", err)
			}
			// The provider said done-and-close after we sent done?
			ru.mu.Lock()
			finished := ru.st.finished() && ru.st.doneSent
			ru.mu.Unlock()
			if finished {
				return true, nil
			}
			return progressed, err
		}
		ru.mu.Lock()
		d, err := ru.st.handle(&f)
		if ru.st.attached {
			progressed = true
		}
		ru.r.stderrDropped.Store(ru.st.errDropped)
		ru.cond.Broadcast()
		ru.mu.Unlock()
		if err != nil {
			return progressed, err
		}
		if len(d.stdout) > 0 && ru.r.Stdout != nil {
			if _, err := ru.r.Stdout.Write(d.stdout); err != nil {
				// Local and final: reconnecting would skip these bytes.
				return progressed, localError{fmt.Errorf("wire: writing stdout: %w", err)}
			}
		}
		if len(d.stderr) > 0 && ru.r.Stderr != nil {
			ru.r.Stderr.Write(d.stderr) // best effort
		}
		ru.mu.Lock()
		finished := ru.st.finished()
		ru.mu.Unlock()
		if finished {
			// The writer sends done and returns; then we are finished.
			select {
			case err := <-writerDone:
				writerDone <- err
				if err != nil {
					return progressed, err
				}
			case <-ctx.Done():
				return progressed, ctx.Err()
			}
			return true, nil
		}
	}
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
