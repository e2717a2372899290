// Command probe is adaptertest's network probe (adaptertest.RunProbe)
// as a program, to be built statically into an instance's image.
package main

import (
	"os"

	"github.com/checkfu/checkfu/adapters/adaptertest"
)

func main() { os.Exit(adaptertest.RunProbe(os.Args[1:], os.Stdout)) }
