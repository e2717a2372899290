// Package mount builds credential-free mount plans and resolves the file
// bodies behind them on the platform side.
//
// A sandbox receives a [Plan]: a session id and, per mount, a name, a kind
// (project tree or memory directory), a target path inside the sandbox and
// whether it is writable. The plan is plain data. It holds no token, no
// lease id, no host path and no credential: file bodies are served by the
// platform's [Resolver], which checks the session's own lease (held on the
// platform side, never shipped) before every read or write.
//
// Invariants:
//
//   - A Plan's type holds only strings, booleans and small integers, so
//     nothing secret can be reachable from it (a reflection test walks it).
//   - Every file name is checked lexically first ([io/fs.ValidPath]: relative,
//     slash-separated, no "." or ".." elements, no empty elements) and then
//     opened through an [os.Root], which refuses symlinks that leave the
//     mounted directory, whether present at check time or swapped in after
//     it: the check and the open are the same openat walk.
//   - No two mounts of a session overlap: neither their targets in the
//     sandbox nor their directories on the host (compared by file
//     identity along each directory's real path, which must still lead
//     to the directory the mount opened), so a write through one mount
//     never changes what another serves.
//   - Only regular files are served, at most [MaxFileBytes] of them. A
//     FIFO, socket or device is refused without waiting for a peer: files
//     are opened non-blocking before the type check.
//   - Only a file whose one name is the one asked for is served: a file
//     with another name (a hard link, which os.Root cannot follow to see
//     where it is) is neither read nor written, nor is one whose names
//     cannot be counted. WriteFile checks the file it opened before it
//     empties it, so a refused write changes nothing.
//   - Every refusal is a [*checkfu.Refusal] with a Code of this package;
//     I/O failures that are not refusals are [*Error]. A refused request
//     returns no file content and no host path.
//   - The zero Resolver has no sessions and refuses everything.
package mount
