// Command brokerprobe runs inside a workload container in the broker's
// Docker test. It speaks MCP to the broker's socket (argv[1]), lists the
// tools, calls argv[2] (allowed) and argv[3] (denied), then tries every
// other way out: each remaining argument is "tcp:HOST:PORT" or
// "udp:HOST:PORT" to dial, and a DNS lookup of example.com. It prints one
// JSON object and exits 0; the test decides what it means.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type callResult struct {
	IsError bool   `json:"isError"`
	Text    string `json:"text"`
}

type report struct {
	Interfaces []string          `json:"interfaces"`
	Tools      []string          `json:"tools"`
	Allowed    callResult        `json:"allowed"`
	Denied     callResult        `json:"denied"`
	Dials      map[string]string `json:"dials"` // target -> "connected" or the error
	DNS        string            `json:"dns"`
	Error      string            `json:"error,omitempty"`
}

func main() {
	r := report{Dials: map[string]string{}}
	if err := run(&r); err != nil {
		r.Error = err.Error()
	}
	json.NewEncoder(os.Stdout).Encode(r)
}

func run(r *report) error {
	if len(os.Args) < 4 {
		return fmt.Errorf("usage: brokerprobe SOCKET ALLOWED DENIED [tcp:HOST:PORT|udp:HOST:PORT]")
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return err
	}
	for _, i := range ifs {
		r.Interfaces = append(r.Interfaces, i.Name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := net.Dial("unix", os.Args[1])
	if err != nil {
		return err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "brokerprobe", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	for _, t := range tools.Tools {
		r.Tools = append(r.Tools, t.Name)
	}
	for _, c := range []struct {
		name string
		out  *callResult
	}{{os.Args[2], &r.Allowed}, {os.Args[3], &r.Denied}} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: map[string]any{}})
		if err != nil {
			return err
		}
		var parts []string
		for _, ct := range res.Content {
			if t, ok := ct.(*mcp.TextContent); ok {
				parts = append(parts, t.Text)
			}
		}
		*c.out = callResult{IsError: res.IsError, Text: strings.Join(parts, "\n")}
	}
	for _, target := range os.Args[4:] {
		network, addr, _ := strings.Cut(target, ":")
		c, err := net.DialTimeout(network, addr, 3*time.Second)
		if err != nil {
			r.Dials[target] = err.Error()
			continue
		}
		if network == "udp" {
			// A UDP "connect" always succeeds; a write shows the route.
			if _, err := c.Write([]byte("x")); err != nil {
				r.Dials[target] = err.Error()
				c.Close()
				continue
			}
		}
		c.Close()
		r.Dials[target] = "connected"
	}
	lctx, lcancel := context.WithTimeout(ctx, 3*time.Second)
	defer lcancel()
	if _, err := net.DefaultResolver.LookupHost(lctx, "example.com"); err != nil {
		r.DNS = err.Error()
	} else {
		r.DNS = "resolved"
	}
	return nil
}
