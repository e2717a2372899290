package door_test

import (
	"context"
	"fmt"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/gateway/door"
)

// Run starts the agent as the door's child, sharing the door's output,
// and returns the agent's exit code once it has ended; with no command
// it refuses to start anything.
func ExampleRun() {
	code, err := door.Run(context.Background(), door.RunConfig{
		Socket:  "/nonexistent/broker.sock", // no model relay: ModelAddr is empty
		Command: []string{"/bin/sh", "-c", "echo hello from the agent; exit 3"},
	})
	fmt.Println(code, err)

	code, err = door.Run(context.Background(), door.RunConfig{Socket: "/nonexistent/broker.sock"})
	refusal, _ := checkfu.CodeOf(err)
	fmt.Println(code, refusal)
	// Output:
	// hello from the agent
	// 3 <nil>
	// 2 relay_arguments_invalid
}
