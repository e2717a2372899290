package procset_test

import (
	"context"
	"fmt"
	"io"
	"os/exec"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/internal/procset"
)

// A provider's OpenProcess: Open reserves the slot and runs the start,
// which makes the pipes, starts the child and hands it to Watch.
func Example() {
	var set procset.Set
	spec := adapters.ProcessSpec{Argv: []string{"/bin/echo", "hello"}}
	p, err := set.Open(context.Background(), "example", spec, func() (*procset.Process, error) {
		pipes, err := procset.NewPipes()
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
		pipes.Attach(cmd)
		if err := cmd.Start(); err != nil {
			pipes.Close()
			return nil, err
		}
		pipes.CloseChild()
		return set.Watch(cmd, pipes, adapters.Evidence{}, func(c *exec.Cmd) error { return c.Process.Kill() }, nil), nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	p.Stdin().Close()
	go io.Copy(io.Discard, p.Stderr())
	out, _ := io.ReadAll(p.Stdout())
	code, _ := p.Wait()
	fmt.Printf("%q exit %d\n", out, code)
	first, _ := set.Destroy(context.Background())
	fmt.Println("destroyed:", first)
	// Output:
	// "hello\n" exit 0
	// destroyed: true
}
