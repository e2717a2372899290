package vendorkit

import (
	"context"
	"io"

	"github.com/checkfu/checkfu/adapters"
)

// A Process is a vendor adapter's live process: the contract's
// [adapters.Process] but for Evidence, which each vendor reports in its
// own type.
type Process interface {
	Stdin() io.WriteCloser
	Stdout() io.Reader
	Stderr() io.Reader
	Wait() (int, error)
	Kill() error
}

// A Sandbox is a vendor adapter's sandbox as the contract sees it: its
// ID and Destroy.
type Sandbox interface {
	ID() string
	Destroy(ctx context.Context) error
}

// Instance returns s as an [adapters.Instance]. Its OpenProcess opens a
// process with open and reports the process's evidence through
// evidence, which maps the vendor's type onto the contract's; a process
// open refuses is returned as a nil Process with open's error.
func Instance[P Process](s Sandbox, open func(context.Context, adapters.ProcessSpec) (P, error), evidence func(P) adapters.Evidence) adapters.Instance {
	return instance[P]{s, open, evidence}
}

type instance[P Process] struct {
	Sandbox
	open     func(context.Context, adapters.ProcessSpec) (P, error)
	evidence func(P) adapters.Evidence
}

func (i instance[P]) OpenProcess(ctx context.Context, spec adapters.ProcessSpec) (adapters.Process, error) {
	p, err := i.open(ctx, spec)
	if err != nil {
		return nil, err
	}
	return process{p, func() adapters.Evidence { return i.evidence(p) }}, nil
}

type process struct {
	Process
	evidence func() adapters.Evidence
}

func (p process) Evidence() adapters.Evidence { return p.evidence() }
