// Package matrix runs the five-fact conformance matrix against a
// provider's egress enforcement, on a topology it owns end to end (a
// Docker one, or network namespaces for the jail), and
// produces the statement a conformance receipt signs. Package conformance
// stays pure (it verifies); this package does the I/O.
//
// The topology is an [docker.Allowlist] built by adapters/docker on a real
// engine, plus what the matrix adds to it ([docker.Allowlist.StartService]):
// its own DNS server, which answers TTL 0, flips one name between a public
// and a private address from one question to the next, answers another
// with both, answers every name under tunnel.test with a sentinel
// address, and logs every question; a DNS control (a container on the
// outer network whose embedded DNS's upstream is that server); live
// HTTP listeners on a
// public-looking address (two ports), on a private address and on the
// guard's own loopback, recording every request; a TCP and UDP listener
// on every address of the host; and the plane of a capability gateway
// (see authority_separation below). Every address is in
// 198.18.0.0/15. The guard, the DNS, the listeners and the workload's
// probe are all the checkfu binary under test ([RunTool]).
//
// The network-namespace variant (provider [JailProvider], adapters/jail)
// needs no engine. Its topology is one network namespace the matrix
// creates with ip(8), joined to the host's by one veth pair: the host end
// holds 198.19.N.1, the namespace end the public-looking (.3), private
// (.5) and owned-DNS (.53) addresses, on a /24 of 198.19.0.0/16 that no
// host interface holds. The live listeners and the owned DNS are sockets
// this process opens inside the namespace (a thread joins it, opens them
// and dies), serving the same handlers and DNS zone as the Docker
// helpers; one more live listener is on the host's loopback (the
// loopback target), and the guard's own listener is on a loopback port
// the matrix picks ([jail.GuardOptions].Addr). The Runner is the process
// running the matrix (the checkfu binary under test, which calls
// jail.InitMain, so it is also every jail's init stage), the guard is
// that binary's [jail.LocalGuard] resolving through the owned DNS, and the
// probe is the same binary bound into an allowlist jail, sending to the
// relay on the jail's 127.0.0.1. The same specs and judges decide
// exact_destination_match, redirect_recheck and
// connect_time_public_address, and default_deny's direct TCP, UDP and DNS
// cases, with the host's loopback among the host addresses tried. Where a
// case is Docker's own it has the jail's equivalent, observing the same
// fact:
//
//   - host_dns_tunnel becomes loopback_dns_tunnel. A Docker workload's
//     resolver is the embedded DNS on 127.0.0.11, inside its sandbox,
//     which could forward; a jail has no resolver of its own, and the
//     only addresses a resolver could sit at that its empty namespace
//     can name are on its loopback (127.0.0.53, 127.0.0.1:53, and the
//     relay's port over UDP). The workload asks each for a name unique to
//     the run under tunnel.test, judged as host_dns_tunnel is; the control
//     is the host, which has a route, asking the owned DNS its own name
//     (logged and answered with the sentinel), so the observation is not
//     blind. No question ever goes to a resolver the matrix does not own.
//   - The container views become /proc views: the workload's and the
//     broker workload's environment, command line and mount table as
//     /proc/PID shows them (found by a marker in the environment the
//     matrix gives them), with only the workspace and the jail's own file
//     systems (tmpfs, its /proc, its /dev nodes) writable; the files are
//     read through /proc/PID/root. separate_routes reads their network
//     namespaces: each the jail's own, holding loopback alone.
//   - guard_compiled_environment becomes guard_compiled_options: the
//     jail's guard runs inside the Runner's process by the provider's
//     design, so it has no environment of its own to inspect; the case
//     searches what the Runner compiled for it (allowlist, resolver,
//     addresses) and its log for the canary. guard_files has no
//     equivalent (the guard writes no file).
//   - The broker workload runs in a jail of network none with the
//     broker's directory bound (`matrix tool jailproc`), opened over
//     acp/wire as on Docker.
//
// Invariants:
//
//   - A fact holds only on recorded observations. Each [Case] carries
//     what was sent, what the workload saw and what reached the live
//     listeners (or the engine's view of a container), and its digest; a
//     fact holds only when every one of its cases passed. An
//     unestablished case leaves its fact unheld, never held.
//   - host_dns_tunnel passes only on an observation that can see a
//     forward. The workload asks Docker's embedded DNS for a name unique
//     to the run under tunnel.test, and the probe decodes the reply. The
//     case fails when the owned DNS logged the name or the reply carries
//     any record; it passes only when the DNS control's question (its
//     embedded DNS forwards to the owned DNS) was logged and answered
//     with the sentinel, and the workload got no reply or a decoded
//     NXDOMAIN, REFUSED or SERVFAIL. Anything else is unestablished.
//     With the owned DNS as the workload's upstream and a route to it
//     (the control's topology), the case is red.
//   - Every refusal is proven to be policy, not a dead port: each refused
//     name resolves to a listener the host proved live before the cases
//     ran, and a closed admitted port must answer as an upstream failure,
//     unlike a denial (upstream_failure_not_a_denial).
//   - The label is always isolated: the matrix owns the topology, so its
//     evidence can never certify on its own; only an operator's
//     production run may say production.
//   - authority_separation rests on a real Run: the plane (native
//     custody holding the canary as a provider credential, custody/edge,
//     the capability gateway and its broker on a Unix socket in a host
//     directory) serves a capability-enabled workload whose process is
//     opened over acp/wire by a wire server on a peer-authenticated Unix
//     socket; the workload has no network, only the broker's socket, and
//     makes one credentialed call. The provider records receiving it once
//     with the credential attached, from the plane's own route (the
//     host's loopback), never through the guard; the canary is absent
//     from everything the Runner compiled for the guard and both
//     workloads (environment, command line, mounts, files), and from what
//     the workload saw.
//   - A mutant is built, never configured: [Mutants] are edits to scratch
//     copies of egress, adapters/docker and adapters/jail files, compiled into a checkfu
//     binary with go build -overlay; the shipped binary has no switch that
//     turns a check off. A mutant is killed only by a case of the fact
//     that targets it which passed on the reference run.
//   - Everything the matrix creates (containers, networks, firewall rules,
//     host listeners; on the jail's topology the namespace, the veth
//     pair, the listeners and every jail) is removed before [Run]
//     returns.
//
// Entry points: [Run] runs the matrix; [Report.Held] and [Report.Record]
// give the facts and the statement's record; [VerifyEvidence] checks an
// evidence file's digests, [ParseEvidenceFile] reads one strictly and
// [MatchEvidence] binds it to a record; [LookupProvider] says which providers the
// matrix can run and which cannot hold a fact by construction; [Mutants]
// and [RunMutant] are the mutation proofs. `checkfu matrix` is the
// command line.
package matrix
