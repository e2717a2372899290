package initstage_test

import (
	"fmt"

	"github.com/checkfu/checkfu/adapters/jail/internal/initstage"
)

// Main acts only in a process the jail provider started with
// initstage.Arg; anywhere else it returns at once.
func ExampleMain() {
	initstage.Main()
	fmt.Println("not an init stage")
	// Output: not an init stage
}

// The provider sends a Config as its encoding; the stage decodes it,
// strictly.
func ExampleDecodeConfig() {
	msg := initstage.Config{Argv: []string{"/bin/echo", "x"}, Cgroups: 3}.Encode()
	c, err := initstage.DecodeConfig(msg)
	fmt.Println(c.Argv, c.Cgroups, err)
	_, err = initstage.DecodeConfig(msg[:len(msg)-1])
	fmt.Println(err)
	// Output:
	// [/bin/echo x] 3 <nil>
	// initstage: malformed message
}
