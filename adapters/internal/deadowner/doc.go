// Package deadowner names the owner of what a process leaves on shared
// ground (a temporary directory, a cgroup tree), and tells a sweep when
// that owner is dead, so that the sweep may remove what it left.
//
// An owner's name is "PID.NS": its pid and the identity of its PID
// namespace (the inode of /proc/self/ns/pid), both in decimal. A pid
// means nothing outside its namespace: two Runners in different PID
// namespaces may share a temporary directory (two containers
// bind-mounting the host's /tmp) or a cgroup tree, and a pid read in
// the sweeper's namespace names no one, or someone else, there.
//
// The invariant: [Dead] reports true only when the name is well formed,
// its namespace is the sweeper's own (read, not assumed), and no
// process has its pid in that namespace. So:
//   - an owner in another PID namespace is never dead, whatever its pid;
//   - when this process cannot read its own namespace, no owner is dead
//     (a sweep removes nothing), and [Name] still gives a name, with
//     namespace 0, that no sweep ever takes;
//   - an old name without the namespace ("PID" alone) is never dead:
//     what earlier revisions left is kept, for its owner or an operator
//     to remove.
//
// A sweep knows what an owner left by its name: a prefix of the sweep's
// own, the owner's name, "-" and anything. [Orphan] reports whether a
// name is one whose owner is dead, and [Orphans] yields such names in a
// directory (the temporary directory) with a descriptor of it: the one
// place where a name is cut and its owner asked, for every sweep.
//
// A reused pid keeps what its earlier owner left: Dead proves absence,
// never identity. The sweeps that use it keep their own checks of the
// thing itself (no link followed, this user's, removed through a
// descriptor).
package deadowner
