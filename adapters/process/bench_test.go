package process_test

import (
	"context"
	"io"
	"os/exec"
	"strconv"
	"testing"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/process"
)

var firstByteArgv = []string{"/bin/sh", "-c", "printf x"}

// BenchmarkCreateToFirstByte measures an instance's Create to the first
// byte of its first process's stdout, against a bare os/exec of the same
// command in the same run (docs/benchmarks/adapters-process.md). Wait
// and Destroy are outside the timer.
func BenchmarkCreateToFirstByte(b *testing.B) {
	ctx := context.Background()
	buf := make([]byte, 1)
	for _, c := range []struct {
		name string
		p    adapters.Provider
	}{{"process", process.New()}, {"remote", process.Remote{}}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				inst, err := c.p.Create(ctx, process.Spec("bench-"+strconv.Itoa(i), ""))
				if err != nil {
					b.Fatal(err)
				}
				p, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: firstByteArgv})
				if err != nil {
					b.Fatal(err)
				}
				p.Stdin().Close()
				if _, err := io.ReadFull(p.Stdout(), buf); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				io.Copy(io.Discard, p.Stdout())
				io.Copy(io.Discard, p.Stderr())
				p.Wait()
				inst.Destroy(ctx)
				b.StartTimer()
			}
		})
	}
	b.Run("os_exec", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(firstByteArgv[0], firstByteArgv[1:]...)
			out, err := cmd.StdoutPipe()
			if err != nil {
				b.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadFull(out, buf); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			io.Copy(io.Discard, out)
			cmd.Wait()
			b.StartTimer()
		}
	})
}
