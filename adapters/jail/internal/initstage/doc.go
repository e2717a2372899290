// Package initstage is a jail's init stage: the code that runs between
// the clone into new namespaces and the exec of the workload, and the
// protocol it speaks with the jail provider over the sync socket.
//
// It runs in one of two binaries: the Runner's own, re-executed
// (adapters/jail.InitMain calls [Main]), or the small static
// checkfu-jail-init program (adapters/jail/cmd/checkfu-jail-init), which
// calls [Main] and nothing else. The program starts in about a
// millisecond; a Runner's binary pays its whole Go runtime start and
// every package init of the Runner first.
//
// Invariants:
//
//   - Small by construction: the package imports nothing of the module
//     (a rule of the module's import test) and keeps no init work, so
//     the program stays a runtime start and this code.
//   - No policy of its own: every value the jail applies (system
//     directories, binds, host name, limits, Landlock ABI, the /tmp
//     size) comes in the [Config] the provider sends; the stage applies
//     it or fails. The provider reads the result back from /proc before
//     the workload runs.
//   - The locks go on the one thread that execs: [Main] locks its OS
//     thread, builds the root, moves it into the cgroups, drops every
//     capability, sets no_new_privs, restricts it with Landlock and
//     installs the seccomp filter, then reports [MsgReady] and execs
//     only after the provider's [MsgGo].
//   - Nothing open reaches the workload: every descriptor from
//     [SyncFD] up is marked close-on-exec before anything else.
//   - One strict encoding: [Config] and [Ready] travel as
//     [Config.Encode] and [Ready.Encode] (no encoding/json in the
//     stage); a message that is not exactly an encoding is refused with
//     [ErrEncoding].
//   - One protocol: the provider refuses a stage whose trial answer is
//     not [MsgReady] followed by [Protocol], so a program built from
//     another revision of this package never starts a jail.
package initstage
