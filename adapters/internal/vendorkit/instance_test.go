package vendorkit_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
)

type fakeSandbox struct{ destroyed int }

func (s *fakeSandbox) ID() string                    { return "inst-1" }
func (s *fakeSandbox) Destroy(context.Context) error { s.destroyed++; return nil }

type fakeProcess struct {
	argv   []string
	killed bool
}

func (p *fakeProcess) Stdin() io.WriteCloser { return nil }
func (p *fakeProcess) Stdout() io.Reader     { return strings.NewReader("out") }
func (p *fakeProcess) Stderr() io.Reader     { return strings.NewReader("err") }
func (p *fakeProcess) Wait() (int, error)    { return 7, nil }
func (p *fakeProcess) Kill() error           { p.killed = true; return nil }

func TestInstance(t *testing.T) {
	s := &fakeSandbox{}
	refuse := errors.New("acme: a Command needs an argv")
	open := func(_ context.Context, spec adapters.ProcessSpec) (*fakeProcess, error) {
		if len(spec.Argv) == 0 {
			return nil, refuse
		}
		return &fakeProcess{argv: spec.Argv}, nil
	}
	evidence := func(p *fakeProcess) adapters.Evidence { return adapters.Evidence{Instance: p.argv[0]} }
	inst := vendorkit.Instance(s, open, evidence)
	if inst.ID() != "inst-1" {
		t.Errorf("ID = %q", inst.ID())
	}
	if p, err := inst.OpenProcess(context.Background(), adapters.ProcessSpec{}); err != refuse || p != nil {
		t.Fatalf("OpenProcess of a refused spec = %v, %v; want a nil Process and %v", p, err, refuse)
	}
	p, err := inst.OpenProcess(context.Background(), adapters.ProcessSpec{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Evidence().Instance; got != "true" {
		t.Errorf("Evidence().Instance = %q, want the mapping of this process (%q)", got, "true")
	}
	out, _ := io.ReadAll(p.Stdout())
	errb, _ := io.ReadAll(p.Stderr())
	if status, err := p.Wait(); string(out) != "out" || string(errb) != "err" || status != 7 || err != nil {
		t.Errorf("the process's streams and Wait = %q, %q, %d, %v", out, errb, status, err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := inst.Destroy(context.Background()); err != nil || s.destroyed != 1 {
		t.Errorf("Destroy = %v, sandbox destroyed %d times", err, s.destroyed)
	}
}
