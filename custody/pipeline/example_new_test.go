package pipeline_test

import (
	"fmt"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/pipeline"
)

// New refuses a configuration with a part missing, saying what it needs:
// a pipeline never runs with a step left out. The Channel.Call example
// shows a configured one at work.
func ExampleNew() {
	_, err := pipeline.New(pipeline.Config{})
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	fmt.Println(err)
	// Output:
	// config_invalid
	// refused: config_invalid: pipeline: New needs Assignments, a Registry, Leases, an Edge and an EvidenceSink
}
