package process_test

import (
	"context"
	"fmt"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/process"
)

// The process provider declares what it is: in-process, graded
// unsupported, with the host's network only.
func ExampleNew() {
	d := process.New().Describe()
	fmt.Println(d.Placement, d.Capability.EgressCertification, d.Capability.NetworkModes)
	// Output: in_process unsupported [unrestricted]
}

// Spec is the one instance spec the provider accepts; anything it cannot
// apply, such as another network mode, is refused before an instance
// exists.
func ExampleSpec() {
	spec := process.Spec("i-1", "sha256:0000000000000000000000000000000000000000000000000000000000000000")
	spec.NetworkMode = "none"
	_, err := process.New().Create(context.Background(), spec)
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	// Output: spec_unsupported
}
