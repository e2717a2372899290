package runner_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/runner"
)

// errUnreachable is what a provider that could not be reached answers.
var errUnreachable = errors.New("provider: could not be reached")

// flakyDestroyProvider's instance fails its first Destroy without
// destroying anything, as a provider that could not be reached does,
// and destroys the instance on every later one.
type flakyDestroyProvider struct {
	runner.Provider
	made chan *flakyDestroyInstance
}

func (p flakyDestroyProvider) Create(ctx context.Context, spec adapters.InstanceSpec) (adapters.Instance, error) {
	inst, err := p.Provider.Create(ctx, spec)
	if err != nil {
		return nil, err
	}
	f := &flakyDestroyInstance{Instance: inst}
	p.made <- f
	return f, nil
}

type flakyDestroyInstance struct {
	adapters.Instance
	mu    sync.Mutex
	calls int
}

func (i *flakyDestroyInstance) Destroy(ctx context.Context) error {
	i.mu.Lock()
	i.calls++
	first := i.calls == 1
	i.mu.Unlock()
	if first {
		return errUnreachable
	}
	return i.Instance.Destroy(ctx)
}

func (i *flakyDestroyInstance) destroys() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.calls
}

// TestCloseRetriesAFailedDestroy: a Session.Close whose Destroy of the
// instance failed returns the failure and leaves the instance to the
// next Close, which destroys it; a Close after that asks the provider
// nothing. Before, every later Close returned nil at once and the
// instance was never destroyed.
func TestCloseRetriesAFailedDestroy(t *testing.T) {
	p := flakyDestroyProvider{Provider: runner.Process(), made: make(chan *flakyDestroyInstance, 1)}
	g := newRig(t, func(c *runner.Config, _ *rig) { c.Provider = p })
	s := g.admitted(t)
	if _, err := s.Launch(context.Background(), runner.LaunchConfig{Process: agentSpec(t, nil)}); err != nil {
		t.Fatal(err)
	}
	inst := <-p.made
	t.Cleanup(func() { inst.Instance.Destroy(context.Background()) })
	alive := func() bool {
		proc, err := inst.Instance.OpenProcess(context.Background(), adapters.ProcessSpec{Argv: []string{"/bin/true"}})
		if err != nil {
			return !errors.Is(err, adapters.CodeInstanceDestroyed)
		}
		proc.Wait()
		return true
	}
	if err := s.Close(); !errors.Is(err, errUnreachable) || !alive() {
		t.Fatalf("the first Close = %v, instance alive %v; want %v, and the instance still there", err, alive(), errUnreachable)
	}
	if err := s.Close(); err != nil || alive() || inst.destroys() != 2 {
		t.Fatalf("the second Close = %v, instance alive %v, destroys %d; want nil, destroyed by the second", err, alive(), inst.destroys())
	}
	if err := s.Close(); err != nil || inst.destroys() != 2 {
		t.Fatalf("a Close after the instance was destroyed = %v, destroys %d; want nil, no third Destroy", err, inst.destroys())
	}
}
