// Package runner is the reference Runner: a small library type that wires
// checkfu's packages the way a host platform does, for one session at a
// time. It is not a server; the host calls it.
//
// A session runs seven steps, each through the package that owns it:
//
//  1. Session.Publish admits and publishes a SandboxProfile (package
//     admission: strict decoding, conveniences compiled into exact hosts).
//  2. Session.Admit selects the Runner's provider by grade (adapters.Grade,
//     capped by a verified receipt) and applies the trust lanes
//     (admission.Admit), freezes the record under the deployment key,
//     loads it back and re-checks it at placement (admission.Place).
//  3. Session.Launch creates the instance and opens the agent process
//     through the provider's process contract, which is acp/wire for a
//     remote provider.
//  4. It checks the process's evidence against the state the Runner holds
//     (adapters.MatchEvidence) and records the match with its assurance.
//  5. It speaks ACP to the agent (package acp).
//  6. The agent's tool calls reach the capability gateway through the
//     broker's Unix socket (gateway, gateway/broker), and only authorized
//     ones reach custody's outbound edge under the Connection's egress
//     rules, the session's lease and, for external_effect, an approval the
//     Approver gave for the exact action (custody/edge, custody/authz).
//  7. Every decision is appended to the session's event log with the
//     request context (eventlog, eventlog/evidencelog).
//
// Entry points: New, Runner.Open, Session.Publish, Session.Admit,
// Session.Launch, Agent.Prompt, Session.WriteLog and Session.Verify.
// Embedders replace pieces through Config: the credential and event
// stores (SQLite by default), the Provider (Process by default), the
// Approver, the clock and the KeySource: EphemeralKeys by default, which
// a restart cannot read back; OpenKeyFile keeps the keys in a file sealed
// by a KeyWrapper (a KMS adapter, proved with package runner/keytest),
// and New refuses to start (CodeStoreKeysMismatch) over stored
// credentials its keys do not open.
//
// Invariants:
//
//   - The request context comes from the server-owned token alone
//     (Runner.Open); every event the Runner appends carries its request,
//     run and actor, and the gateway channel is bound to it.
//   - Every refusal on the path is a *checkfu.Refusal with the code of the
//     package that refused (this package adds the codes of codes.go),
//     and is appended
//     to the session log before it is returned. An event that cannot be
//     appended fails the step: an unrecorded decision is no decision.
//   - Nothing on the path sees a secret. No field of the Runner or of a
//     session holds a custody.Custodian: only the closure that builds a
//     session's custody/edge captures it, and the session keeps of the edge
//     its Send alone, so nothing reachable from an exported type can open a
//     credential (custody's TestNoExportedTypeHoldsASecret walks them). The
//     package does not import custody/internal/reveal (imports_test.go),
//     and events carry identifiers and codes only.
//   - The broker answers a process only once its evidence has matched:
//     the socket exists from before the process starts, but what the
//     process sends waits unanswered in the listener's backlog until the
//     match, and the listener closes (removing the socket) when the
//     process ends. A mismatch kills the process, closes its channel,
//     and the session serves no later agent (adapters.CodeEvidenceMismatch).
//   - Each agent gets a lease, a gateway channel and a broker of its
//     own, issued and opened under the session's token at its Launch and
//     revoked and closed with it: its lease budget, its broker's refusal
//     budget and its calls in flight are its own, and no connection of
//     it outlives it. The approvals book is the session's, but an
//     approval binds the agent's lease. Every event of the agent's calls
//     names its channel (the gateway's), and so does every event the
//     Runner records about the agent (its process, turns and permission
//     requests): its window in the log is the events naming its channel.
//   - An approval is bound to the exact action: the agent's permission
//     request is resolved to a profile tool with external_effect and
//     arguments its schema accepts, and the approval binds the action's
//     digest, the session's actor, lease and session. The gateway finds it
//     itself; the agent never names one. Anything unresolvable, or that
//     the actor holds no permission assignment for, is denied without
//     asking the Approver.
//   - An agent's permission request for its own tool (one whose title
//     names no tool of the profile, as a third-party agent's file read
//     or grep is) is allowed without the Approver only when it is a
//     workspace read: its ACP kind is "read", "search" or "think", it
//     names at most MaxPermissionLocations locations (at least one unless
//     "think"), and every one is absolute, has no ".." element and is
//     lexically at or below the cwd session/new named (never the
//     fallback Cwd, never "/"). It is logged as
//     CodeWorkspaceReadPermission. Anything else of the agent's own
//     (edit, delete, move, execute, fetch, switch_mode, other, a location
//     outside) is denied with CodePermissionUnbound, logged, and the
//     Approver is not asked. The check is lexical: a symbolic link inside
//     the workspace may lead out of it, and the host cannot resolve links
//     in an isolated or remote sandbox's file system; the sandbox, not
//     this consent, bounds what the agent's own tools reach.
//   - The agent cannot hold its session open: the ACP handshake and the
//     turns run without the session's lock, and Session.Close ends every
//     agent's ACP client and kills its process itself before destroying
//     the instance, so a stalled handshake, a turn that never ends or a
//     provider whose Destroy fails leaves nothing spoken to. No wait on
//     a provider is unbounded: a killed process that is never reported
//     ended, and a Destroy that never returns, are given up after
//     ExitGrace.
//   - A host process's broker directory is 0700; a container's, which
//     its non-root user must traverse, is 0755 inside a 0700 directory.
//     No other local user can reach the 0666 socket.
//   - Only an in-process provider is enrolled by the Runner itself (its
//     statement signed by the deployment key); any other needs the
//     operator's Config.Enrollment.
//   - session/new names the instance's real working directory (the
//     process spec's Dir, else the instance's WorkDir) and, with
//     LaunchConfig.Door, announces the door program (cmd/checkfu-door,
//     copied read-only beside the socket) as the stdio MCP server
//     MCPServerName: the announcement holds the socket's path and nothing
//     secret, and any MCP-speaking agent reaches the session's tools
//     through it.
//   - With LaunchConfig.Door and a model registration (authz.ModelAPI),
//     the agent runs under the door, which serves the model route on a
//     loopback port of the sandbox; the agent's settings point its
//     ordinary base URL there and its only key is
//     admission.PlaceholderKey, never substituted (a process spec whose
//     Env names a variable the Runner sets for the agent, or any model
//     setting, is refused: which of two entries a program reads differs
//     by provider): the outbound edge
//     attaches the real key because the registration says so. On a
//     provider whose instance has a working directory on the host, each
//     agent gets a fresh private (0700) HOME inside it; a harness entry's
//     files (LaunchConfig.Agent) are written there only, bounded by
//     MaxHomeFiles and MaxHomeFileBytes. A harness entry's model must be a
//     model name (authz.ValidModelName) and the install directory and
//     HOME it is rendered with hold no quote, backslash or control
//     character, else the launch is refused: they are written into
//     settings the agent parses. A permission request may name a
//     profile tool by the name the harness entry says the agent's model
//     sees (mcp__checkfu__list_issues); it is bound exactly as by the
//     tool's own name. For an agent whose requests name no tool
//     (admission.AgentLaunch.PermissionByToolCall: codex-acp), the
//     request is bound to the tool call the agent announced under the
//     same toolCallId, of which the Runner remembers the
//     MaxNotedToolCalls most recent; an id never announced is unbound.
//   - Each prompt turn's end (its ACP stop reason, or "failed" with a
//     code, or "closed" when Agent.Close or Session.Close ended it first)
//     and each agent process's end are in the log, once each, on every
//     path: a normal turn, Agent.Cancel, a failed handshake, a refused
//     evidence match, Agent.Close and Session.Close. An agent runs one
//     turn at a time: a Prompt beside a turn in flight, or after the
//     agent is closed, is refused (CodeRefusedPrompt, logged) and
//     reaches no agent.
//   - Capability-free code gets no broker: a Runner without Connections
//     launches its agents with no plane, no socket, no BrokerSocketEnv
//     and no MCP server announced, and denies every permission request
//     but a workspace read.
//   - Placement is the enrollment's, never the provider's word. New
//     refuses a Description that disagrees with the enrollment
//     (placement, materialization revision, capability) with
//     CodeDescriptionMismatch, before any instance exists; the evidence
//     is matched with the enrollment's placement, target and
//     materialization revision, so only an in-process placement is ever
//     isolation_checked; an instance that runs across acp/wire under an
//     in-process enrollment is destroyed unused.
//   - A remote placement gets no plane: no broker, no gateway channel, no
//     lease, so no credentialed call; its agent's permission requests are
//     denied with CodeCapabilityUnsupported, logged.
//   - Every tool registration is reachable: New refuses one whose
//     operation on its resource no egress rule of its Connection allows
//     (CodeRegistrationUnreachable).
//   - An agent's refusals are bounded: the permission requests the
//     Runner denies and those acp denies alone (acp.Config.OnRefusal)
//     are paced to RefusalsPerSecond, recorded once per kind and then
//     as one counted event (MaxCoalesced kinds), and the refusal that
//     spends MaxRefusals is followed by one CodeAgentRefusalsExceeded
//     record and closes the session's agents' ACP clients; later ones
//     are denied unasked and unrecorded.
//   - The zero Config with a Dir is usable; a nil Approver denies every
//     external effect.
package runner
