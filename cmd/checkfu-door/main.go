// Command checkfu-door is the sandbox side of the one door: the program
// the Runner places in every sandbox that holds a capability. It holds no
// token and no key; it relays to the broker socket the plane serves.
//
//	checkfu-door mcp -socket PATH
//	    serve MCP over stdio, relayed to the broker socket (what ACP's
//	    session/new announces to the agent as a stdio MCP server)
//	checkfu-door run -socket PATH [-model 127.0.0.1:PORT] -- AGENT [ARGS...]
//	    relay the model route on a loopback port to the socket, and run
//	    the agent in a process group of its own, with the door's output
//	    and its input copied; the group is stopped once the input has
//	    ended and the agent has not (door.InputGrace)
//
// See package gateway/door.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/checkfu/checkfu/gateway/door"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: checkfu-door mcp -socket PATH | run -socket PATH [-model ADDR] -- AGENT [ARGS...]")
		return 2
	}
	fs := flag.NewFlagSet("checkfu-door "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("socket", "", "the broker socket's path")
	model := fs.String("model", "", "the loopback address of the model relay (run only)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *socket == "" {
		fmt.Fprintln(stderr, "checkfu-door: -socket is required")
		return 2
	}
	ctx := context.Background()
	switch args[0] {
	case "mcp":
		if fs.NArg() != 0 || *model != "" {
			fmt.Fprintln(stderr, "checkfu-door mcp takes -socket only")
			return 2
		}
		if err := door.RelayMCP(ctx, stdin, stdout, *socket); err != nil {
			fmt.Fprintln(stderr, "checkfu-door:", err)
			return 1
		}
		return 0
	case "run":
		code, err := door.Run(ctx, door.RunConfig{Socket: *socket, ModelAddr: *model, Command: fs.Args()})
		if err != nil {
			fmt.Fprintln(stderr, "checkfu-door:", err)
		}
		return code
	default:
		fmt.Fprintf(stderr, "checkfu-door: unknown command %q\n", args[0])
		return 2
	}
}
