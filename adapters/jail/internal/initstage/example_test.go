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
