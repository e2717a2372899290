package runner

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/eventlog/evidencelog"
	"github.com/checkfu/checkfu/gateway"
	"github.com/checkfu/checkfu/gateway/broker"
)

// BrokerSocket is the file name of a session's broker socket inside its
// broker directory.
const BrokerSocket = "broker.sock"

// BrokerSocketEnv is the environment variable that tells the agent
// process where its broker socket is.
const BrokerSocketEnv = "CHECKFU_BROKER_SOCKET"

// A plane is one session's share of the trusted plane (step 6): its
// evidence sink over the session log, the gateway's plane (lease book and
// lease, approvals, outbound edge, gateway: gateway.NewPlane, the one
// constructor), and, for the agent being served, the channel the token
// opened for it and the broker serving that channel on a Unix socket in
// the session's broker directory. Each agent gets a channel and a broker
// of its own, closed with it: what one agent's process (or a child it
// left behind) does on its channel, its refusal budget and its calls in
// flight, ends with it. None of it can open a
// credential: the edge holds the custodian and reaches it only for a call
// the gateway's pipeline authorized.
type plane struct {
	sink      *evidencelog.Sink
	gw        *gateway.Plane
	approvals *authz.Approvals
	// grant, channel and broker are the current agent's: its lease,
	// issued like the session's, and the channel and broker on it; zero
	// between agents. Guarded by the session's mu.
	grant   authz.Lease
	channel *gateway.Channel
	broker  *broker.Broker
	request authz.LeaseRequest // what every agent's lease is issued with
	// mismatched is set when a process's evidence did not match: the
	// sandbox is not the one admitted, and no later agent is served.
	// Guarded by the session's mu.
	mismatched bool
	dir        string // the broker directory; the socket is dir/BrokerSocket
	root       string // the 0700 directory holding dir (dir itself on the host)

	// stop ends the broker's Serve and served reports its return; both
	// nil while no process's evidence has matched. Guarded by the
	// session's mu.
	stop   context.CancelFunc
	served chan error
}

// buildPlane builds the session's plane and starts its broker.
func (s *Session) buildPlane(ctx context.Context) (_ *plane, err error) {
	r := s.r
	if r.catalog == nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: a session needs at least one registered tool")
	}
	p := &plane{}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	if p.sink, err = evidencelog.New(r.log, s.rc.Session); err != nil {
		return nil, err
	}
	var ids []string
	for _, t := range r.tools {
		ids = append(ids, t.Capability)
	}
	scope := authz.LeaseScope{Service: Service, Gateway: GatewayName, Actor: s.rc.Actor}
	p.request = authz.LeaseRequest{Provider: r.integration, Capabilities: ids, Scope: scope, Budget: DefaultLeaseBudget, TTL: DefaultLeaseTTL}
	if p.gw, err = gateway.NewPlane(gateway.PlaneConfig{
		Authenticator: r.tokens, Registry: r.registry, Catalog: r.catalog, Connections: r.conns, Assignments: r.assignments,
		Lease:    p.request,
		Evidence: p.sink, Label: r.cfg.Label, Now: r.now, Edge: r.newEdge, Logger: r.cfg.Logger,
		TracerProvider: r.cfg.TracerProvider, MeterProvider: r.cfg.MeterProvider,
	}); err != nil {
		return nil, err
	}
	p.approvals = p.gw.Approvals
	_, shared := r.provider.(BrokerMounter)
	if p.dir, p.root, err = tempDir(shared); err != nil {
		return nil, err
	}
	return p, nil
}

// open issues the next agent's lease and opens its channel, under the
// session's token, and its broker.
func (p *plane) open(ctx context.Context, s *Session) error {
	l, err := p.gw.Leases.Issue(p.request)
	if err != nil {
		return err
	}
	ch, err := p.gw.Gateway.Open(ctx, gateway.ChannelConfig{Token: s.bearer(), Lease: l.ID, Tools: s.r.tools})
	if err != nil {
		_ = p.gw.Leases.Revoke(l.ID)
		return err
	}
	b, err := broker.New(ch)
	if err != nil {
		ch.Close()
		_ = p.gw.Leases.Revoke(l.ID)
		return err
	}
	p.grant, p.channel, p.broker = l, ch, b
	return nil
}

// listen listens on the broker's socket for one process. Connections the
// process makes wait in the listener's backlog, unanswered, until serve.
func (p *plane) listen() (net.Listener, error) {
	return broker.ListenUnix(p.socket())
}

// serve starts answering MCP on ln: the process's evidence matched.
func (p *plane) serve(ln net.Listener) {
	ctx, stop := context.WithCancel(context.Background())
	p.stop, p.served = stop, make(chan error, 1)
	go func() { p.served <- p.broker.Serve(ctx, ln) }()
}

// serving reports whether the broker answers a process now.
func (p *plane) serving() bool { return p.stop != nil }

// stopServing ends the broker's sessions and closes its listener, which
// removes the socket, so that the next process reaches nothing until
// its own evidence has matched; then it closes the agent's channel.
func (p *plane) stopServing() {
	if p.stop != nil {
		p.stop()
		<-p.served
		p.stop, p.served = nil, nil
	}
	if p.channel != nil {
		p.channel.Close()
		_ = p.gw.Leases.Revoke(p.grant.ID)
		p.grant, p.channel, p.broker = authz.Lease{}, nil, nil
	}
}

// socket returns the path of the broker's socket on the plane's host.
func (p *plane) socket() string { return filepath.Join(p.dir, BrokerSocket) }

// close stops the broker, closes the channel, closes the gateway's plane
// (the edge's idle connections, the lease) and removes the broker
// directory.
func (p *plane) close() {
	p.stopServing()
	if p.gw != nil {
		p.gw.Close()
	}
	if p.root != "" {
		os.RemoveAll(p.root)
	}
}

// placeDoor copies the door program from hostDoor into the broker
// directory, once per plane, read-only (0555: a container's user runs it
// from the read-only mount), and returns the stdio MCP server session/new
// announces: the door at sandboxDoor relaying to sandboxSocket. The
// announcement carries no token, key or environment.
func (p *plane) placeDoor(hostDoor, sandboxDoor, sandboxSocket string) (json.RawMessage, error) {
	dst := filepath.Join(p.dir, DoorName)
	if _, err := os.Stat(dst); os.IsNotExist(err) {
		if err := copyFile(dst, hostDoor); err != nil {
			os.Remove(dst)
			return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: the door program cannot be placed: %v", err)
		}
	}
	return json.Marshal(struct {
		Name    string   `json:"name"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
		Env     []string `json:"env"`
	}{MCPServerName, sandboxDoor, []string{"mcp", "-socket", sandboxSocket}, []string{}})
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o555)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
