package runner

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/gateway"
	"github.com/checkfu/checkfu/internal/telemetry"
)

// Cwd is the working directory the Runner names in session/new when
// neither the process spec nor the instance names one (an instance says
// its own by a WorkDir method, as the process provider's does).
const Cwd = "/tmp"

// DoorName is the file name of the door program (cmd/checkfu-door) the
// Runner copies into a session's broker directory, beside the socket.
const DoorName = "checkfu-door"

// MCPServerName is the name under which session/new announces the door
// to the agent as a stdio MCP server; agents derive their tool names from
// it (mcp__checkfu__list_issues, checkfu_list_issues, ...).
const MCPServerName = "checkfu"

// ExitGrace is how long Agent.Close waits for the agent to exit after its
// input ends before killing it.
const ExitGrace = 5 * time.Second

// LaunchConfig configures Session.Launch.
type LaunchConfig struct {
	// Process is the agent process to open; the Runner adds
	// BrokerSocketEnv to its environment.
	Process adapters.ProcessSpec
	// OnUpdate receives the agent's session/update notifications (see
	// acp.Config.OnUpdate); nil ignores them.
	OnUpdate func(acp.SessionNotification)
	// Stderr receives the agent's standard error, best effort; nil
	// discards it. It is never a semantic channel.
	Stderr io.Writer
	// Door is the host path of the door program (cmd/checkfu-door). When
	// set and the session holds a capability, the Runner copies it into
	// the broker directory (read-only, mounted with it into a container)
	// and announces it in session/new mcpServers as the stdio MCP server
	// MCPServerName, relayed to the broker socket, so an agent that
	// speaks MCP lists and calls the session's tools. Empty announces
	// no MCP server; the agent has BrokerSocketEnv alone.
	//
	// When the session also has a model route (a Connection's
	// authz.ModelAPI registration), the Runner runs the agent under the
	// door (checkfu-door run -model 127.0.0.1:PORT): the door serves the
	// model route on that loopback port of the sandbox, relayed to the
	// broker socket, and the agent gets the dialect's base-URL settings
	// (ANTHROPIC_BASE_URL, or OPENAI_BASE_URL ending in /v1) with
	// admission.PlaceholderKey as its only key. On a provider whose
	// instance has a working directory on the host (process) the agent
	// also gets a private HOME there (HomeDirPrefix), made fresh for it.
	Door string
	// Agent, with Door, is the harness catalog entry of a third-party
	// agent (admission.Agent): its settings and HOME files are rendered
	// with the model relay's URL, the private HOME and Install, and its
	// argv is used when Process.Argv is empty. Nil runs Process as is.
	Agent *admission.AgentLaunch
	// Install is where Agent's package is installed, as the sandbox
	// sees it (its {install}).
	Install string
}

// An Agent is one agent process of a session, spoken to over ACP.
type Agent struct {
	s       *Session
	proc    adapters.Process
	client  *acp.Client
	session string // the agent's ACP session id
	info    *acp.InitializeResponse
	cwd     string            // the cwd session/new names
	home    string            // the agent's private HOME on the host, or ""
	mcp     []json.RawMessage // the mcpServers session/new announces
	channel string            // the ID of the agent's gateway channel, or "" (capability-free, remote)
	stderr  chan struct{}     // closed when stderr reached its end
	waited  chan struct{}     // closed when Wait returned code and werr
	code    int
	werr    error

	mu    sync.Mutex // guards turn and ended
	turn  bool       // a prompt turn is in flight and its end not logged
	ended bool       // the process's end is logged
}

// Launch runs steps 3 to 6 for an admitted session: the first Launch
// creates the instance the admission placed (the provider's spec for the
// session's profile digest) and the session's plane (lease, approvals,
// outbound edge, gateway channel under the session's token, and the
// broker on a Unix socket in a directory of its own). Each Launch then
// opens one agent process through the provider's process contract
// (acp/wire for a remote provider), checks its evidence against the
// state the Runner holds (adapters.MatchEvidence) and records the match
// and its assurance, and speaks ACP to it: initialize and session/new.
// The agent's tool calls reach the gateway through the broker; its
// permission requests for external_effect tools go to the Approver.
//
// A process whose evidence does not match is killed and refused with
// adapters.CodeEvidenceMismatch. A session serves one agent at a time: a
// Launch before the previous Agent's Close is refused with
// checkfu.CodeConfigInvalid. Every refusal is logged.
func (s *Session) Launch(ctx context.Context, cfg LaunchConfig) (*Agent, error) {
	ctx, span := s.step(ctx, "launch")
	a, err := s.launch(ctx, cfg)
	if err == nil {
		// The agent's calls reach the plane over its channel, which
		// cannot carry the host's context: they are traced under this
		// step, then under the prompt turn in flight.
		s.traceUnder(span)
	}
	telemetry.End(span, spanCode(err))
	return a, err
}

// traceUnder makes span the parent of the spans of the session's tool
// calls and permission requests from now on.
func (s *Session) traceUnder(span trace.Span) {
	sc := span.SpanContext()
	s.parent.Store(&sc)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.plane != nil && s.plane.channel != nil {
		var attrs []attribute.KeyValue
		if s.profile != nil {
			attrs = append(attrs, telemetry.KeyProfileDigest.String(s.profile.ProfileDigest()))
		}
		s.plane.channel.SetTrace(sc, attrs...)
	}
}

// launch is Launch inside its span.
func (s *Session) launch(ctx context.Context, cfg LaunchConfig) (*Agent, error) {
	a, err := s.start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// Step 5: ACP. The agent times the handshake, so it runs without the
	// session's lock: Session.Close can always take it, destroy the
	// instance and so end a handshake the agent never answers.
	if err = a.handshake(ctx); err != nil {
		a.kill()
		s.mu.Lock()
		if s.plane != nil {
			s.plane.stopServing()
		}
		delete(s.agents, a)
		s.mu.Unlock()
		return nil, errors.Join(err, s.decide(ctx, eventlog.Event{Kind: eventlog.KindDenial, Result: string(CodeRefusedACP), Channel: a.channel}, err, ""), a.exited(ctx, CodeKilled))
	}
	return a, nil
}

// start runs steps 3 and 4 under the session's lock: the instance, the
// plane, the process and its evidence. It returns the agent with its
// broker serving and its ACP client not yet spoken to.
func (s *Session) start(ctx context.Context, cfg LaunchConfig) (*Agent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: session %s is closed", checkfu.Quote(s.rc.Session))
	}
	if s.record == nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: Launch before a successful Admit")
	}
	r := s.r
	spec := networkSpec(r.provider.Spec(s.rc.Session, s.profile.ProfileDigest()), s.profile)
	// Placement is the enrollment's. A remote placement gets no plane at
	// all: a capability is unsupported there, so its sandbox gets no
	// broker and its agent no channel to make a credentialed call on.
	inProcess := r.placement() == admission.PlacementInProcess
	if s.plane == nil && r.catalog != nil && inProcess {
		p, err := s.buildPlane(ctx)
		if err != nil {
			return nil, errors.Join(err, s.decide(ctx, eventlog.Event{Kind: eventlog.KindDenial, Result: string(CodeRefusedPlane)}, err, ""))
		}
		s.plane = p
	}
	if s.instance == nil {
		var inst adapters.Instance
		var err error
		if bm, ok := r.provider.(BrokerMounter); ok && s.plane != nil {
			inst, err = bm.CreateWithBroker(ctx, spec, s.plane.dir)
		} else {
			inst, err = r.provider.Create(ctx, spec)
		}
		if err != nil {
			return nil, errors.Join(err, s.decide(ctx, eventlog.Event{Kind: eventlog.KindDenial, Result: string(CodeRefusedInstance), Provider: r.enrollment.Target()}, err, ""))
		}
		s.instance = inst
	}
	if _, wired := s.instance.(adapters.Wired); wired && inProcess {
		// Judged by what the instance is: its processes run across
		// acp/wire, so it is not in-process, whatever it was enrolled
		// as. It is destroyed unused; a Destroy that fails is returned,
		// and asked again by the next Launch and by Close, since the
		// session keeps the instance (and never runs anything in it).
		var err error = checkfu.Refuse(CodeDescriptionMismatch, "runner: provider %s made an instance that runs across acp/wire, but its enrollment places it in_process", r.enrollment.Target())
		err = errors.Join(err, s.destroyInstance())
		return nil, errors.Join(err, s.decide(ctx, eventlog.Event{Kind: eventlog.KindDenial, Result: string(CodeRefusedInstance), Provider: r.enrollment.Target()}, err, ""))
	}
	ps := cfg.Process
	home := "" // the agent's private HOME on the host, or ""
	var mcpServers []json.RawMessage
	var ln net.Listener
	if s.plane == nil {
		// Capability-free: no broker, no socket, nothing announced.
		if len(s.agents) > 0 {
			err := checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: session %s still serves an agent; close it before launching another", checkfu.Quote(s.rc.Session))
			return nil, errors.Join(err, s.decide(ctx, eventlog.Event{Kind: eventlog.KindDenial, Result: string(CodeRefusedBroker)}, err, ""))
		}
	} else {
		socket := s.plane.socket()
		if bm, ok := r.provider.(BrokerMounter); ok {
			socket = bm.BrokerPath() + "/" + BrokerSocket
		}
		if err := shadow(ps.Env, map[string]bool{BrokerSocketEnv: true}); err != nil {
			return nil, errors.Join(err, s.decide(ctx, eventlog.Event{Kind: eventlog.KindDenial, Result: string(CodeRefusedBroker)}, err, ""))
		}
		ps.Env = append(append([]string(nil), ps.Env...), BrokerSocketEnv+"="+socket)
		if cfg.Door != "" {
			door := doorPath(socket)
			server, err := s.plane.placeDoor(cfg.Door, door, socket)
			if err != nil {
				return nil, errors.Join(err, s.decide(ctx, eventlog.Event{Kind: eventlog.KindDenial, Result: string(CodeRefusedBroker)}, err, ""))
			}
			mcpServers = append(mcpServers, server)
			dl := doorLaunch{spec: ps, dialect: r.modelDialect(), agent: cfg.Agent, install: cfg.Install, door: door, socket: socket}
			if _, mounted := r.provider.(BrokerMounter); !mounted {
				if wd, ok := s.instance.(interface{ WorkDir() string }); ok {
					dl.workDir = wd.WorkDir()
				}
			}
			if ps, home, err = dl.render(); err != nil {
				return nil, errors.Join(err, s.decide(ctx, eventlog.Event{Kind: eventlog.KindDenial, Result: string(CodeRefusedBroker)}, err, ""))
			}
		}
		if s.plane.serving() {
			// One socket, one process: the first agent's broker still
			// answers on it.
			err := checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: session %s still serves an agent; close it before launching another", checkfu.Quote(s.rc.Session))
			return nil, errors.Join(err, s.decide(ctx, eventlog.Event{Kind: eventlog.KindDenial, Result: string(CodeRefusedBroker)}, err, ""))
		}
		if s.plane.mismatched {
			err := checkfu.Refuse(adapters.CodeEvidenceMismatch, "runner: session %s's sandbox failed its evidence check; nothing of it is served", checkfu.Quote(s.rc.Session))
			return nil, errors.Join(err, s.decide(ctx, eventlog.Event{Kind: eventlog.KindDenial, Result: string(CodeRefusedBroker)}, err, ""))
		}
		// The agent's own channel and broker, closed with it.
		if err := s.plane.open(ctx, s); err != nil {
			return nil, errors.Join(err, s.decide(ctx, eventlog.Event{Kind: eventlog.KindDenial, Result: string(CodeRefusedBroker)}, err, ""))
		}
		var err error
		if ln, err = s.plane.listen(); err != nil {
			s.plane.stopServing()
			return nil, errors.Join(err, s.decide(ctx, eventlog.Event{Kind: eventlog.KindDenial, Result: string(CodeRefusedBroker)}, err, ""))
		}
	}
	// The agent's events name its channel, as the gateway's events of
	// its calls do: a reader puts both in the agent's window by name.
	var channel string
	if s.plane != nil && s.plane.channel != nil {
		channel = s.plane.channel.ID()
	}
	proc, err := s.instance.OpenProcess(ctx, ps)
	if err != nil {
		if ln != nil {
			ln.Close()
			s.plane.stopServing()
		}
		return nil, errors.Join(err, s.decide(ctx, eventlog.Event{Kind: eventlog.KindDenial, Result: string(CodeRefusedProcess), Provider: r.enrollment.Target(), Channel: channel}, err, ""))
	}
	a := &Agent{s: s, proc: proc, cwd: workDir(s.instance, cfg.Process), home: home, mcp: mcpServers, channel: channel, stderr: make(chan struct{}), waited: make(chan struct{})}
	go func() {
		// Wait needs stdout read, by the client or by kill.
		a.code, a.werr = proc.Wait()
		close(a.waited)
	}()
	go func() {
		w := cfg.Stderr
		if w == nil {
			w = io.Discard
		}
		io.Copy(w, proc.Stderr())
		close(a.stderr)
	}()
	// Step 4: the evidence, against what the Runner holds.
	m := adapters.MatchEvidence(r.held(spec), proc.Evidence())
	started := assuranceResult(m.Assurance)
	ev := eventlog.Event{Kind: eventlog.KindProcessStarted, Provider: r.enrollment.Target(), ProcessID: s.rc.Session, Channel: a.channel, Result: string(started)}
	if err := s.decide(ctx, ev, m.Err(), started); err != nil || !m.OK() {
		// The sandbox is not the one admitted: nothing of it is
		// served, now or later.
		if ln != nil {
			ln.Close()
			s.plane.stopServing()
			s.plane.mismatched = true
		}
		a.kill()
		return nil, errors.Join(m.Err(), err, a.exited(ctx, CodeKilled))
	}
	if ln != nil {
		s.plane.serve(ln)
	}
	pl := s.plane
	var ch *gateway.Channel
	var lease string
	if pl != nil {
		ch, lease = pl.channel, pl.grant.ID
	}
	// spent closes the agent's client once the session's refusal budget
	// is spent, before the refusal is answered: the agent never learns
	// of a refusal past the budget on an open channel.
	agent := newHarness(cfg.Agent) // a copy the caller cannot change
	ready := make(chan struct{})   // closed once a.client is set
	spent := func() {
		if s.refusals.exhausted() {
			<-ready
			a.client.Close()
		}
	}
	a.client = acp.NewClient(proc.Stdout(), proc.Stdin(), acp.Config{
		ClientInfo: &acp.Implementation{Name: "checkfu-runner", Version: "v1"},
		OnUpdate: func(n acp.SessionNotification) {
			// In arrival order, before any later permission request
			// is answered: the tool calls it may name are noted.
			agent.note(n)
			if cfg.OnUpdate != nil {
				cfg.OnUpdate(n)
			}
		},
		OnPermission: func(ctx context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
			defer spent()
			if !inProcess {
				return s.unsupported(ctx, req)
			}
			return s.tracedPermission(ctx, pl, ch, lease, workspaceRoot(a.cwd), agent, req)
		},
		OnRefusal: func(err error) {
			s.refusedByACP(err, channel)
			spent()
		},
	})
	close(ready)
	go func() {
		// A session that spent its refusal budget closes the channel
		// of each of its agents, the ones not refused just now too.
		select {
		case <-s.refusals.closed:
			a.client.Close()
		case <-a.waited:
		}
	}()
	if s.agents == nil {
		s.agents = map[*Agent]bool{}
	}
	s.agents[a] = true
	return a, nil
}

// handshake sends initialize and session/new.
func (a *Agent) handshake(ctx context.Context) error {
	var err error
	if a.info, err = a.client.Initialize(ctx); err != nil {
		return err
	}
	ns, err := a.client.NewSession(ctx, acp.NewSessionRequest{Cwd: a.cwd, MCPServers: a.mcp})
	if err != nil {
		return err
	}
	a.session = ns.SessionID
	return nil
}

// Home returns the agent's private HOME as the host sees it, or "" when
// the Runner made none (see LaunchConfig.Door). It is removed with the
// instance, at Session.Close.
func (a *Agent) Home() string { return a.home }

// Info returns the agent's initialize answer.
func (a *Agent) Info() *acp.InitializeResponse { return a.info }

// Cwd returns the working directory session/new named: the process
// spec's Dir, else the instance's own working directory, else Cwd.
func (a *Agent) Cwd() string { return a.cwd }

// Prompt sends one prompt turn and waits for its end, which it appends
// to the session log as a turn_ended event: its result is the stop
// reason (end_turn, cancelled, max_tokens, max_turn_requests, refusal),
// or "failed" with the error's code when the turn ended without one. A
// turn that Agent.Close or Session.Close ends first is logged by them.
// A Prompt while another turn of the agent is in flight, or after the
// agent is closed, is refused with checkfu.CodeConfigInvalid and logged
// as CodeRefusedPrompt: it reaches no agent.
func (a *Agent) Prompt(ctx context.Context, text string) (*acp.PromptResponse, error) {
	ctx, span := a.s.step(ctx, "prompt")
	a.s.traceUnder(span)
	resp, err := a.prompt(ctx, text)
	code := spanCode(err)
	if span.IsRecording() && err == nil {
		span.SetAttributes(attribute.String("checkfu.stop_reason", string(resp.StopReason)))
	}
	telemetry.End(span, code)
	return resp, err
}

// prompt is Prompt inside its span.
func (a *Agent) prompt(ctx context.Context, text string) (*acp.PromptResponse, error) {
	a.mu.Lock()
	busy, ended := a.turn, a.ended
	if !busy && !ended {
		a.turn = true
	}
	a.mu.Unlock()
	if busy || ended {
		// One turn at a time, as ACP runs them: a second would share
		// the first's record, and a closed agent has no turn to end.
		err := checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: the agent of session %s has a turn in flight or is closed", checkfu.Quote(a.s.rc.Session))
		return nil, errors.Join(err, a.s.decide(context.WithoutCancel(ctx), eventlog.Event{Kind: eventlog.KindDenial, Result: string(CodeRefusedPrompt), ProcessID: a.s.rc.Session, Channel: a.channel}, err, ""))
	}
	resp, err := a.client.Prompt(ctx, a.session, acp.TextBlock(text))
	result := CodeFailed
	if err == nil {
		result = stopResult(resp.StopReason)
	}
	open, lerr := a.endTurn(context.WithoutCancel(ctx), result, err)
	if lerr != nil {
		return nil, errors.Join(err, lerr)
	}
	if !open && err == nil {
		// Close ended the turn (and logged it) before the answer was
		// read: the turn did not end as the agent says.
		return nil, checkfu.Refuse(acp.CodeClientClosed, "runner: the turn was ended by Close")
	}
	return resp, err
}

// Cancel asks the agent to end its prompt turn (ACP session/cancel); the
// turn's Prompt then returns with the stop reason cancelled. Permission
// requests the agent left pending are answered cancelled.
func (a *Agent) Cancel() error { return a.client.Cancel(a.session) }

// endTurn appends the end of the turn in flight, once, and reports
// whether a turn was in flight.
func (a *Agent) endTurn(ctx context.Context, result ResultCode, err error) (bool, error) {
	a.mu.Lock()
	open := a.turn
	a.turn = false
	a.mu.Unlock()
	if !open {
		return false, nil
	}
	ev := eventlog.Event{Kind: eventlog.KindTurnEnded, ProcessID: a.s.rc.Session, Channel: a.channel, Result: string(result), Provider: a.s.r.enrollment.Target()}
	if err != nil {
		ev.Code = codeOf(err)
	}
	return true, a.s.append(ctx, ev)
}

// exited appends the end of the process, once.
func (a *Agent) exited(ctx context.Context, result ResultCode) error {
	a.mu.Lock()
	done := a.ended
	a.ended = true
	a.mu.Unlock()
	if done {
		return nil
	}
	return a.s.append(ctx, eventlog.Event{Kind: eventlog.KindProcessExited, ProcessID: a.s.rc.Session, Channel: a.channel, Result: string(result), Provider: a.s.r.enrollment.Target()})
}

// workDir is the cwd session/new names for a process of inst.
func workDir(inst adapters.Instance, ps adapters.ProcessSpec) string {
	if ps.Dir != "" {
		return ps.Dir
	}
	if wd, ok := inst.(interface{ WorkDir() string }); ok && wd.WorkDir() != "" {
		return wd.WorkDir()
	}
	return Cwd
}

// Close ends the agent: it closes its input, waits up to ExitGrace for it
// to exit (killing it after, and waiting up to ExitGrace more for the
// provider to report the exit, else refusing with CodeProcessUnreaped)
// and up to ExitGrace more for its stderr to end, stops the broker and
// records the exit status. A child the agent
// left holding its stderr may still write to LaunchConfig.Stderr until
// Session.Close.
func (a *Agent) Close(ctx context.Context) error {
	ctx, span := a.s.step(ctx, "close_agent")
	err := a.close(ctx)
	telemetry.End(span, spanCode(err))
	return err
}

// close is Close inside its span.
func (a *Agent) close(ctx context.Context) error {
	// A turn still in flight ends here, before the client does.
	_, terr := a.endTurn(context.WithoutCancel(ctx), CodeClosed, nil)
	a.client.Close()
	var err error
	select {
	case <-a.waited:
		err = a.werr
	case <-time.After(ExitGrace):
		a.proc.Kill()
		err = a.reap()
	}
	a.drain()
	a.s.mu.Lock()
	if a.s.plane != nil {
		a.s.plane.stopServing()
	}
	delete(a.s.agents, a)
	a.s.mu.Unlock()
	ferr := a.s.flushRefusals(context.WithoutCancel(ctx))
	// a.code is read only once Wait has returned it: unreaped, it may
	// still be written.
	result := CodeKilled
	switch {
	case errors.Is(err, CodeProcessUnreaped):
		result = CodeUnreaped
	case err == nil:
		result = exitResult(a.code)
	}
	return errors.Join(terr, err, ferr, a.exited(ctx, result))
}

// unsupported denies a permission request on a remote placement, where
// a capability is unsupported, with CodeCapabilityUnsupported, logged,
// without asking the Approver.
func (s *Session) unsupported(ctx context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
	ctx = checkfu.WithRequestContext(ctx, s.rc)
	if s.refusals.pace(ctx) != nil {
		return reject(req)
	}
	err := checkfu.Refuse(CodeCapabilityUnsupported, "runner: session %s is placed remote, where a capability is unsupported", checkfu.Quote(s.rc.Session))
	_ = s.refuse(ctx, &eventlog.Event{Kind: eventlog.KindDenial, Result: string(CodeRefusedPermission)}, err)
	return reject(req)
}

// reap waits up to ExitGrace for a killed process's exit, and returns
// Wait's error, or CodeProcessUnreaped when the provider never reported
// the exit: a provider that ignores Kill cannot hold the Runner.
func (a *Agent) reap() error {
	select {
	case <-a.waited:
		return a.werr
	case <-time.After(ExitGrace):
		return checkfu.Refuse(CodeProcessUnreaped, "runner: the agent process of session %s was killed and its provider reported no exit within %s", checkfu.Quote(a.s.rc.Session), ExitGrace)
	}
}

// kill ends a process that never became an agent. Its stdout is read to
// the end by the client when there is one, and drained here otherwise.
func (a *Agent) kill() {
	a.proc.Kill()
	if a.client == nil {
		go io.Copy(io.Discard, a.proc.Stdout())
	} else {
		a.client.Close()
	}
	a.reap()
	a.drain()
}

// drain waits up to ExitGrace, once the process has ended, for its
// stderr to reach its end. A child the process left behind may hold the
// pipe open for as long as it likes: the Runner stops waiting, and the
// instance's Destroy (Session.Close) closes the pipe.
func (a *Agent) drain() {
	select {
	case <-a.stderr:
	case <-time.After(ExitGrace):
	}
}

// networkSpec gives spec the admitted profile's network policy: its
// member as the network mode and, for an allowlist, its exact hosts
// (published sorted by host, then port), so the instance applies what
// admission admitted rather than the provider's default.
func networkSpec(spec adapters.InstanceSpec, v *admission.Published) adapters.InstanceSpec {
	spec.NetworkMode = string(v.PolicyType())
	spec.AllowedHosts = nil
	for _, h := range v.Hosts() {
		spec.AllowedHosts = append(spec.AllowedHosts, egress.HostPort{Host: h.Host, Port: h.Port})
	}
	return spec
}
