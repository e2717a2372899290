// Command checkfu-jail-init is a jail's init stage as a small static
// program: the jail provider execs it, in the jail's new namespaces,
// instead of re-executing the Runner's own binary, when
// jail.Config.InitProgram names it. It is never run by hand.
//
// Build it from the same revision of the module as the Runner, without
// cgo, and install it owned by root (or the Runner's user) and writable
// by its owner alone:
//
//	CGO_ENABLED=0 go build -o /usr/local/libexec/checkfu-jail-init ./adapters/jail/cmd/checkfu-jail-init
package main

import (
	"fmt"
	"os"

	"github.com/checkfu/checkfu/adapters/jail/internal/initstage"
)

func main() {
	initstage.Main() // never returns when started by the provider
	fmt.Fprintln(os.Stderr, "checkfu-jail-init: started by the jail provider only (jail.Config.InitProgram)")
	os.Exit(2)
}
