// Package process is the minimum sandbox provider and the reference
// customer of adaptertest: each instance's processes are plain local
// processes of the host. It isolates nothing.
//
// Entry points: [New] (or the zero [Provider]) and [Spec], the one
// instance spec it accepts.
//
// Invariants:
//
//   - It claims nothing it does not do. Its capability enforces no axis,
//     advertises the grade unsupported (so no allowlist profile can ever
//     select it), and offers only the unrestricted network mode: a plain
//     process can open sockets, so it never declares none. Admission
//     therefore refuses it for the adversarial lane; it is for the
//     trusted lane only.
//   - It refuses, with adapters.CodeSpecUnsupported, an instance spec it
//     cannot apply: a root image, another platform or network mode, any
//     resource limit.
//   - Its placement is in-process, so its evidence is matched with the
//     assurance isolation_checked: the Runner authored the capability.
//     That assurance is about the comparison, not about isolation, of
//     which there is none; its evidence is labelled mock.
//   - One live process per instance, kept with adapters.Slot and released
//     only once the process is reaped; Kill reaches the whole process
//     group.
//   - Nothing a process started outlives it: on Linux each process is
//     the init of a PID namespace of its own (inside a user namespace
//     mapping only the Runner's uid and gid, when the Runner is not
//     root), so when it exits or is killed the kernel kills every
//     process it left behind, even one that left its process group.
//     Where the kernel refuses the namespace (or off Linux) a process
//     gets its process group only, and a child that outlives an exited
//     process, or leaves the group, survives.
//   - A process never inherits the Runner's environment: it gets PATH,
//     HOME and TMPDIR (the instance's private directory) and the spec's
//     Env, nothing else. Destroy kills the live process and removes the
//     directory.
//   - An owner killed before it destroyed its instances leaves no
//     directory for long: each is TMPDIR/checkfu-process-PID.NS-*,
//     named by its owner's pid and PID namespace (NS, the namespace's
//     inode), and the first Create of a later process removes those of
//     its own namespace whose pid no process has; an owner in another
//     PID namespace sharing TMPDIR (another container) keeps its own,
//     and where the namespace cannot be read (a system without /proc)
//     nothing is removed. It removes only a directory (never
//     a link) this user owns that no one else may write in, works
//     through descriptors opened without following a link, never
//     follows a link inside or enters another filesystem, and descends
//     at most maxSweepDepth (64) levels, so a hostile workspace cannot
//     make it remove anything outside the directory.
package process
