// Package procset is what the host-process providers (adapters/process
// and adapters/jail) share of an instance's processes: the one-live-
// process reservation, the three pipes of a child, its reaping and its
// exit status. How a child is started (a plain exec, a jail's init
// stage) stays with each provider.
//
// Entry points: [Set.Open] reserves the instance's slot and runs the
// provider's start; [NewPipes] makes a child's pipes; [Set.Watch] turns a
// started exec.Cmd into an adapters.Process; [Set.Destroy] stops the set.
//
// Invariants:
//   - At most one live process per Set (adapters.Slot); a failed start
//     releases the reservation, and a reaped process releases it.
//   - Kill never signals a reaped process: its pid may be another's.
//   - Wait's status is the exit code, or 128+signal for a killed child.
//   - A pipe read to EOF is closed at once; Destroy closes every pipe of
//     every process the set opened, so nothing a child left behind holds
//     the Runner's descriptors.
//   - Destroy kills the live process and waits for its reaping (bounded
//     by its context) before it returns; a second Destroy does nothing.
package procset
