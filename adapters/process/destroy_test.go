package process_test

import (
	"context"
	"io"
	"testing"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/process"
)

// TestDestroyRacesOpen destroys instances right after opening a process,
// killed or not, many times: under -race it caught Remote's wire.Server
// Serve racing its Close (an Add to the Server's WaitGroup after Accept,
// unlocked). Every Wait must return.
func TestDestroyRacesOpen(t *testing.T) {
	ctx := context.Background()
	for _, p := range []adapters.Provider{process.Remote{}, process.New()} {
		for i := 0; i < 60; i++ {
			inst, err := p.Create(ctx, process.Spec("s", ""))
			if err != nil {
				t.Fatal(err)
			}
			pr, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", "sleep 60 & printf ready; wait"}})
			if err != nil {
				t.Fatal(err)
			}
			go io.Copy(io.Discard, pr.Stderr())
			if i%2 == 0 {
				pr.Kill()
			}
			go io.Copy(io.Discard, pr.Stdout())
			inst.Destroy(ctx)
			pr.Wait()
		}
	}
}
