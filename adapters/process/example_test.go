package process_test

import (
	"context"
	"fmt"
	"io"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/process"
)

func Example() {
	ctx := context.Background()
	p := process.New()
	spec := process.Spec("i-1", "sha256:0000000000000000000000000000000000000000000000000000000000000000")
	inst, err := p.Create(ctx, spec)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer inst.Destroy(ctx)

	proc, err := inst.OpenProcess(ctx, adapters.ProcessSpec{Argv: []string{"/bin/sh", "-c", "cat; exit 3"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	io.WriteString(proc.Stdin(), "hello\n")
	proc.Stdin().Close()
	out, _ := io.ReadAll(proc.Stdout())
	status, _ := proc.Wait()
	m := adapters.MatchEvidence(adapters.HeldFor(p.Describe(), spec), proc.Evidence())
	fmt.Printf("%q %d %v %s\n", out, status, m.OK(), m.Assurance)
	// Output: "hello\n" 3 true isolation_checked
}
