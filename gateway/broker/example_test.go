package broker_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/checkfu/checkfu/gateway"
	"github.com/checkfu/checkfu/gateway/broker"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

type exampleT struct{}

func (exampleT) Helper()           {}
func (exampleT) Fatal(args ...any) { panic(fmt.Sprint(args...)) }
func (exampleT) Cleanup(func())    {}

// The Runner builds a broker for a channel and serves it to the sandbox;
// sandbox code sees the profile's tools and nothing else.
func ExampleNew() {
	r := rigtest.New(exampleT{})
	r.Grant("issues.list")
	tok, _ := r.Tokens.Issue(rigtest.Member(), time.Minute)
	ch, err := r.Gateway.Open(context.Background(), gateway.ChannelConfig{Token: tok, Lease: r.Lease.ID, Tools: r.Tools[:1]})
	if err != nil {
		panic(err)
	}
	b, err := broker.New(ch)
	if err != nil {
		panic(err)
	}
	plane, sandbox := net.Pipe()
	go b.ServeConn(context.Background(), plane)

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v0"}, nil).
		Connect(context.Background(), &mcp.IOTransport{Reader: sandbox, Writer: sandbox}, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	tools, _ := cs.ListTools(context.Background(), nil)
	for _, t := range tools.Tools {
		fmt.Println(t.Name, "-", t.Description)
	}
	res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_issues", Arguments: map[string]any{"state": "open"}})
	fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// list_issues - List the issues of acme/app.
	// false {"issues":[{"n":1}]}
}
