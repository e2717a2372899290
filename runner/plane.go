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
// evidence sink over the session log, its lease book and lease, its
// approvals, the outbound edge, the gateway, the channel the token opened
// and the broker serving it on a Unix socket in a directory of its own.
// None of it can open a credential: the edge holds the custodian and
// reaches it only inside Edge.Send, after a call's decision.
type plane struct {
	sink      *evidencelog.Sink
	leases    *authz.Leases
	lease     authz.Lease
	approvals *authz.Approvals
	edge      outboundEdge
	channel   *gateway.Channel
	broker    *broker.Broker
	dir       string // the broker directory; the socket is dir/BrokerSocket
	root      string // the 0700 directory holding dir (dir itself on the host)

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
	if p.leases, err = authz.NewLeases(authz.LeaseConfig{Catalog: r.catalog, Registry: r.registry, Now: r.now}); err != nil {
		return nil, err
	}
	var ids []string
	for _, t := range r.tools {
		ids = append(ids, t.Capability)
	}
	scope := authz.LeaseScope{Service: Service, Gateway: GatewayName, Actor: s.rc.Actor}
	if p.lease, err = p.leases.Issue(authz.LeaseRequest{Provider: r.integration, Capabilities: ids, Scope: scope, Budget: DefaultLeaseBudget, TTL: DefaultLeaseTTL}); err != nil {
		return nil, err
	}
	if p.approvals, err = authz.NewApprovals(authz.ApprovalConfig{Evidence: p.sink, Label: r.cfg.Label, Now: r.now}); err != nil {
		return nil, err
	}
	if p.edge, err = r.newEdge(p.leases, p.approvals); err != nil {
		return nil, err
	}
	gw, err := gateway.New(gateway.Config{
		Authenticator: r.tokens, Assignments: r.assignments, Registry: r.registry, Connections: r.conns,
		Leases: p.leases, Approvals: p.approvals, Edge: p.edge, Evidence: p.sink, Label: r.cfg.Label,
		Service: Service, Name: GatewayName, Now: r.now,
	})
	if err != nil {
		return nil, err
	}
	if p.channel, err = gw.Open(ctx, gateway.ChannelConfig{Token: s.bearer(), Lease: p.lease.ID, Tools: r.tools}); err != nil {
		return nil, err
	}
	if p.broker, err = broker.New(p.channel); err != nil {
		return nil, err
	}
	_, shared := r.provider.(BrokerMounter)
	if p.dir, p.root, err = tempDir(shared); err != nil {
		return nil, err
	}
	return p, nil
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
// its own evidence has matched.
func (p *plane) stopServing() {
	if p.stop != nil {
		p.stop()
		<-p.served
		p.stop, p.served = nil, nil
	}
}

// socket returns the path of the broker's socket on the plane's host.
func (p *plane) socket() string { return filepath.Join(p.dir, BrokerSocket) }

// close stops the broker, closes the channel and the edge's idle
// connections, revokes the lease and removes the broker directory.
func (p *plane) close() {
	p.stopServing()
	if p.channel != nil {
		p.channel.Close()
	}
	if p.edge != nil {
		p.edge.CloseIdleConnections()
	}
	if p.leases != nil && p.lease.ID != "" {
		_ = p.leases.Revoke(p.lease.ID)
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
