package adapters

import (
	"context"
	"io"
	"net"
	"sync"

	"github.com/checkfu/checkfu/acp/wire"
)

// A Wired instance is one whose processes run across acp/wire: a remote
// provider's instance. adaptertest uses it to check the credit window
// and the replay journal frame by frame.
type Wired interface {
	// PrepareWire arranges for the next open on the instance's wire to
	// run spec, and returns how to reach the instance's wire server.
	PrepareWire(ctx context.Context, spec ProcessSpec) (WireEndpoint, error)
}

// A WireEndpoint is how a Runner reaches one wire server.
type WireEndpoint struct {
	// Dial opens a connection to the server.
	Dial func(ctx context.Context) (net.Conn, error)
	// Keys authenticate the server when Dial returns TCP connections;
	// nil when it returns Unix sockets, whose peer acp/wire
	// authenticates by its uid.
	Keys *wire.Keys
}

// OpenWire returns a [Process] driven across acp/wire through the
// endpoint e, for a remote provider's OpenProcess: the same semantics as a local process
// (stdin, separate stdout and stderr, exit status, kill), with the wire's
// stated costs (a credit window on stdin, a bounded replay journal on
// stdout). ev is the evidence the provider reported for the process.
//
// The process runs until it exits or Kill is called; ctx bounds only the
// open. Read Stdout and Stderr to EOF, as with OS pipes. After Kill, Wait
// returns the context's cancellation error: the wire's kill is best
// effort and reports no status.
func OpenWire(ctx context.Context, e WireEndpoint, ev Evidence) Process {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	p := &wireProcess{stdin: inW, stdout: outR, stderr: errR, cancel: cancel, done: make(chan struct{}), ev: ev}
	r := &wire.Runner{Dial: e.Dial, Keys: e.Keys, Stdin: inR, Stdout: outW, Stderr: errW}
	go func() {
		p.status, p.err = r.Run(runCtx)
		outW.Close()
		errW.Close()
		inR.CloseWithError(io.ErrClosedPipe)
		cancel()
		close(p.done)
	}()
	return p
}

type wireProcess struct {
	stdin          *io.PipeWriter
	stdout, stderr *io.PipeReader
	cancel         context.CancelFunc
	ev             Evidence

	once   sync.Once
	done   chan struct{} // closed when Run has returned; then status and err are set
	status int
	err    error
}

func (p *wireProcess) Stdin() io.WriteCloser { return p.stdin }
func (p *wireProcess) Stdout() io.Reader     { return p.stdout }
func (p *wireProcess) Stderr() io.Reader     { return p.stderr }
func (p *wireProcess) Evidence() Evidence    { return p.ev }

func (p *wireProcess) Wait() (int, error) {
	<-p.done
	return p.status, p.err
}

func (p *wireProcess) Kill() error {
	p.once.Do(p.cancel)
	return nil
}
