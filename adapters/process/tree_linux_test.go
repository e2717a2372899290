package process

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/checkfu/checkfu/adapters"
)

// TestKillReachesTheGroupWithoutNamespaces: where the kernel refuses a
// PID namespace, Kill still reaches a child in the process's group, so
// its stdout ends.
func TestKillReachesTheGroupWithoutNamespaces(t *testing.T) {
	was := noNamespaces.Swap(true)
	defer noNamespaces.Store(was)
	ctx := context.Background()
	inst, err := New().Create(ctx, Spec("group", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Destroy(ctx)
	p, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", "sleep 120 & echo ready; exec sleep 120"}})
	if err != nil {
		t.Fatal(err)
	}
	p.Stdin().Close()
	go io.Copy(io.Discard, p.Stderr())
	ready := make([]byte, len("ready\n"))
	if _, err := io.ReadFull(p.Stdout(), ready); err != nil {
		t.Fatal(err)
	}
	p.Kill()
	ended := make(chan struct{})
	go func() {
		io.Copy(io.Discard, p.Stdout())
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(20 * time.Second):
		t.Fatal("a child in the process's group outlived Kill")
	}
	p.Wait()
}
