// Package docker runs sandboxed processes on a real Docker engine, over
// the engine's Unix socket, with a standard-library client
// (internal/engine). It is the Docker-specific foundation the adapters
// provider contract wraps: an [Engine], images built without a registry
// ([Engine.BusyboxImage], [Engine.GuardImage], [BuildStatic]), an
// [Instance] with one live [Process] at a time, and the [Allowlist]
// topology. [Engine.NewProvider] wraps it in the contract: a [Provider]
// implementing adapters.Provider, which passes adaptertest on a real
// engine (TestAdaptertest, TestAdaptertestAllowlist, and
// TestAdaptertestGVisor under runsc).
//
// Invariants:
//
//   - Nothing is pulled. Every image is built here and imported, and a
//     missing image is refused with [CodeImageMissing].
//   - Everything created carries the Engine's label (Options.Label;
//     [TestLabel] in tests), so a cleanup can find it.
//   - At most one live process per instance. A second [Instance.Open]
//     while one lives is refused with acp/wire's process_already_open; the
//     reservation ends when the process is reaped ([Process.Wait] has
//     returned), never earlier.
//   - Every process runs in a fresh container with all capabilities
//     dropped, no-new-privileges, a read-only root, a tmpfs /tmp (mode
//     1777), memory (swap included), pids and CPU limits, a non-root user
//     (root is refused) and an init. Its isolation is read back from the
//     engine after create and before start, compared with what was asked
//     (a difference is [CodeIsolationMismatch] and nothing starts), and
//     reported as [Evidence] labelled checkfu.LabelIsolated.
//   - The zero network choice is the policy "none": NetworkMode none, a
//     loopback interface only. The "allowlist" policy puts the process on
//     an [Allowlist] topology's internal network, whose bridge has no IPv4
//     address (inhibit_ipv4) and whose traffic to the host is dropped in
//     INPUT (iptables and ip6tables); its only peer is the guard. The
//     adapter offers no "unrestricted" mode.
//   - The Provider declares only what it applies and reads back: network
//     mode none, and allowlist only when ProviderConfig.GuardImage is
//     set; one fixed image by digest, every limit required, and
//     runner_enforced on each axis
//     whose mechanism the read-back shows: image, filesystem, mounts,
//     network_policy, process_isolation, privileges, resources,
//     lifetime, and syscalls only under runsc (under runc the engine's
//     default seccomp profile is neither set nor read back). Its
//     evidence is derived from the read-back, never echoed from the
//     spec. The gVisor tier is its own identity
//     (checkfu:docker-gvisor-provider), offered only when the engine
//     registers runsc. Its grade is unsupported without allowlist (no
//     egress filter to grade) and advisory_filter with it, by
//     advertisement: no receipt exists for it, and an advertisement never
//     reaches security_boundary.
//   - An allowlist instance (adapters.InstanceSpec.AllowedHosts, checked
//     by adapters.CheckSpec before any engine call) gets an [Allowlist]
//     topology of its own, in a free slot, whose guard allows exactly the
//     spec's hosts; its containers are read back on that internal network
//     alone with the black-hole upstream DNS, and its evidence says
//     allowlist. Destroy removes the topology: its containers, both
//     networks, the INPUT rules and the policy directory, by ID.
//   - The broker directory goes only with network mode none:
//     CreateWithBroker refuses an allowlist spec, so the broker's socket
//     stays the only way out of a capability-enabled instance.
//   - The context given to Open bounds the open, not the process.
//   - stdout and stderr are separate (the engine's multiplexed stream,
//     demultiplexed); stdin EOF is a half-close; the exit code is the
//     engine's (137 after [Process.Kill]).
//
// What the tests prove, with live listeners, on a real engine: through
// the guard an allowlisted name answers 200 and another is refused 403
// with Checkfu-Refusal; the workload has no direct route to the outer
// network, reaches no host listener over TCP or UDP and no bridge
// gateway; a random name queried through Docker's embedded DNS never
// reaches the owned DNS server; and, as the negative control, the same
// topology without the two fixes does leak to the host.
package docker
