package runner_test

import (
	"fmt"

	"github.com/checkfu/checkfu/runner"
)

// Process is the default provider: plain local processes, placed in
// process and graded unsupported.
func ExampleProcess() {
	d := runner.Process().Describe()
	fmt.Println(d.Identity.Provider, d.Placement, d.Capability.EgressCertification)
	// Output: checkfu:process-provider in_process unsupported
}

// ProcessWire runs the same processes across acp/wire and is placed
// remote, so Config.Enrollment must enroll it.
func ExampleProcessWire() {
	d := runner.ProcessWire().Describe()
	fmt.Println(d.Identity.Provider, d.Placement, d.Capability.EgressCertification)
	// Output: checkfu:process-wire-provider remote unsupported
}
