package jail_test

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/jail"
	"github.com/checkfu/checkfu/egress"
)

// LocalGuard runs the reference egress guard in this process for each
// allowlist instance, behind a Unix socket; a guard address off loopback
// is refused before anything listens. A provider takes it as
// Config.Guard.
func ExampleLocalGuard() {
	guard := jail.LocalGuard(jail.GuardOptions{})
	socket, stop, err := guard(context.Background(), []egress.HostPort{{Host: "api.example.com", Port: 443}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(filepath.IsAbs(socket), stop())

	_, _, err = jail.LocalGuard(jail.GuardOptions{Addr: "0.0.0.0:8080"})(context.Background(), nil)
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	// Output:
	// true <nil>
	// config_invalid
}

// A program whose jails re-execute it calls InitMain first thing in main
// (and in TestMain); in any other process it returns at once.
func ExampleInitMain() {
	jail.InitMain()
	// ... the rest of main.
}
