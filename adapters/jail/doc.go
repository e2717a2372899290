// Package jail is a daemonless sandbox provider for Linux: each process
// of an instance runs in a fresh namespace jail, built by the Runner's
// own binary or a small init program of this module, with no daemon, no
// setuid helper and no container engine.
//
// Entry points: [New] (with [Config]) and [Provider.Spec], the instance
// spec it accepts; [LocalGuard], the guard of the allowlist mode;
// [InitMain], which the program must call first thing in main (and in
// TestMain) unless [Config.InitProgram] is set, because a jail is then
// started by re-executing the program as its init stage; [Probe], what
// the kernel offers.
//
// How a jail starts. Go cannot unshare a multithreaded process, so the
// Runner starts an init stage, with [InitArg], either its own binary
// again (/proc/self/exe) or the checkfu-jail-init program
// ([Config.InitProgram], adapters/jail/cmd/checkfu-jail-init: the same
// stage as a small static program, which starts in about a millisecond
// where a large Runner pays its runtime start and every package init;
// New checks the file and every jail execs the one it opened), with
// SysProcAttr clone flags: new user, mount, PID, network, IPC, UTS and
// cgroup namespaces and a session of its own (no controlling terminal,
// no process group shared with the Runner), the namespace's root mapped
// to one unprivileged host identity (nobody when the Runner is root, the
// Runner's own user otherwise). The init stage, on one locked thread, builds the root
// (a tmpfs holding only mount points: the host's system directories
// read-only, the writable workspace, the read-only [Config.Binds]
// beneath [BindRoot], a private /tmp, /proc of its PID namespace and a
// minimal /dev), pivots into it and remounts it read-only, brings up
// loopback, sets rlimits, then applies the locks on that thread: the
// securebits locked, every capability set emptied, no_new_privs,
// Landlock over the file system, and a seccomp filter. It then reports
// ready and waits.
//
// Invariants:
//
//   - Read back before it runs. While the init stage waits, the Runner
//     reads the jail from /proc: the seven namespaces differ from its
//     own, the exec'ing thread's capability sets are empty, no_new_privs
//     and a seccomp filter are set, the root maps to the jail identity
//     alone, the mount table is exactly the plan (read-only and nosuid
//     where planned), and the cgroups hold it with the asked limits.
//     Evidence is derived from that read-back (Landlock, which /proc
//     does not show, from the init stage's report), labelled isolated;
//     a read-back that differs from the provider's enforcement statement
//     is [CodeReadBackMismatch] and the jail is killed before the
//     workload's exec.
//   - Fail closed, never degrade. [New] tries the kernel and refuses
//     with [CodeKernelUnsupported], naming each one missing, when user
//     namespaces, Landlock or seccomp are not there. An axis the kernel
//     cannot enforce is not advertised: without writable cgroup v1
//     memory, pids and cpu hierarchies the resources axis is unenforced
//     and every limit is refused; a profile that needs it is then
//     refused at selection. The image axis is never claimed: a jail runs
//     the host's system directories, not a pinned image.
//   - Bounded. With the resources axis, an instance's workspace is a
//     tmpfs of [Config.WorkspaceBytes] mounted on the host, its pages
//     charged to the memory group of the jail that writes them, so
//     neither the workspace nor /tmp (a tmpfs of [TmpBytes]) can fill
//     the host's disk; Destroy unmounts it, and a dead Runner's are
//     swept by the next provider's probe.
//   - Network none is an empty network namespace with loopback only.
//     Network allowlist (offered only with [Config.Guard]) adds one
//     listener on 127.0.0.1:[RelayPort] inside that namespace, created
//     by the init stage and served by the Runner, whose only way out is
//     the guard's Unix socket outside: the guard decides every request,
//     and a workload that ignores the proxy environment has no route.
//   - Stopping is bounded. A jail's relays close every connection they
//     carry as the jail is reaped; an allowlist guard's stop (in
//     Destroy) waits [GuardStopGrace] for the connections its socket
//     relays and the requests in flight, then closes the connections,
//     both sides: a held connection or a silent upstream cannot hold
//     Destroy, nor the Runner's Close. Destroy waits [ReapTimeout] at
//     most for the killed jail to be reaped, whatever its context.
//   - A broker goes only with network none: [Provider.CreateWithBroker]
//     refuses any other mode, so capability-enabled code reaches the
//     broker's socket and nothing else (no relay beside it).
//   - The grade is advisory_filter with a guard (unsupported without):
//     an advertisement, capped below security_boundary until a receipt
//     exists. With every axis but the image realized, network none does
//     not yet meet the adversarial lane (which needs all nine).
//   - One live process per instance, kept with adapters.Slot. Kill is
//     SIGKILL to PID 1 of the jail's PID namespace: the kernel kills
//     every process in it, so nothing outlives Kill or Destroy; the init
//     stage also dies with the Runner (parent-death signal).
//   - No cgroup outlives its instance: a Runner's groups are beneath a
//     parent of its own (checkfu-jail-<pid>.<pidns> in each v1
//     controller, the pidns the inode of its PID namespace), which
//     Destroy removes once it holds no group; a dead Runner's are swept
//     by the next [Probe] of the same PID namespace, never by one of
//     another (whose pids name other processes).
//   - A process never inherits the Runner's environment: PATH, HOME
//     (the workspace), TMPDIR, the proxy variables for allowlist, and
//     the spec's Env, one assignment per name: the last, as os/exec
//     keeps for the process provider.
//
// What the tests prove, with live listeners and tries that must fail,
// is listed in SECURITY.md and docs/providers.md.
package jail
