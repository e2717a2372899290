package process_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/process"
)

// TestNothingOutlivesTheProcess: a child the process leaves behind holds
// its stdout; the stdout ends once the process exits, or once it is
// killed, because the child dies with it, even one that moved to a
// session and process group of its own.
func TestNothingOutlivesTheProcess(t *testing.T) {
	for name, c := range map[string]struct {
		script string
		kill   bool
	}{
		"exits, leaving a child":                    {script: "sleep 120 & exit 0"},
		"exits, leaving a child in its own session": {script: "setsid sleep 120 & exit 0"},
		"killed, a child in its own session":        {script: "setsid sleep 120 & echo ready; exec sleep 120", kill: true},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			inst, err := process.New().Create(ctx, process.Spec("tree", ""))
			if err != nil {
				t.Fatal(err)
			}
			defer inst.Destroy(ctx)
			p, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", c.script}})
			if err != nil {
				t.Fatal(err)
			}
			p.Stdin().Close()
			go io.Copy(io.Discard, p.Stderr())
			if c.kill {
				ready := make([]byte, len("ready\n"))
				if _, err := io.ReadFull(p.Stdout(), ready); err != nil {
					t.Fatal(err)
				}
				p.Kill()
			}
			ended := make(chan struct{})
			go func() {
				io.Copy(io.Discard, p.Stdout())
				close(ended)
			}()
			select {
			case <-ended:
			case <-time.After(20 * time.Second):
				t.Fatal("a child of the process still holds its stdout")
			}
			p.Wait()
		})
	}
}
