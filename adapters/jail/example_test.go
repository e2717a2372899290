//go:build linux

package jail_test

import (
	"context"
	"fmt"
	"io"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/jail"
)

// The program calls jail.InitMain first thing in main (here, TestMain
// does); then a provider runs each process in a fresh jail.
func ExampleNew() {
	p, err := jail.New(jail.Config{})
	if err != nil {
		fmt.Println(err) // names what the kernel lacks
		return
	}
	ctx := context.Background()
	inst, err := p.Create(ctx, p.Spec("example", "sha256:00"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer inst.Destroy(ctx)
	proc, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", "echo hello from $(hostname); id -u"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	proc.Stdin().Close()
	out, _ := io.ReadAll(proc.Stdout())
	code, _ := proc.Wait()
	fmt.Printf("%s", out)
	fmt.Println("exit", code, "evidence", proc.Evidence().Label)
	// Output:
	// hello from checkfu-jail
	// 0
	// exit 0 evidence isolated
}

// Probe says what the kernel offers, for a one-line reason to fall back.
func ExampleProbe() {
	s := jail.Probe()
	fmt.Println(len(s.Lacks()) == 0)
	// Output: true
}
