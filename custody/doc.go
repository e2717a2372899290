// Package custody holds provider credentials so that nothing a sandboxed
// agent can reach — an API response, an event, a log line, an error, a
// mount plan, model context — can read them back. What must not leak is
// structurally absent, never merely denied.
//
// A credential lives in a [Secret], known to everyone else by an opaque
// [Handle]. Native custody seals it into a [Store] under the
// custody address [Binding] (namespace, integration, handle) with a
// versioned [Keyset]; the trusted plane opens it only at the outbound edge,
// after the egress rule decision, and attaches it to the request there.
//
// What a Secret is a boundary against, and what it is not: a Secret
// protects its bytes against every path that a sandbox, a provider
// response, an event, a log line, an error, a mount plan or model context
// can reach, and against accident (printing, logging, marshalling or
// wrapping it in an error by mistake). It is not a boundary against code
// running in the trusted process. Such code can build a [Keyset] from a
// root key it knows, [Keyset.Seal] any Secret it holds (or [Native.Put] it
// into a Store it reads) and decrypt the record with the layout
// docs/custody.md documents; it can also read process memory through
// package unsafe. No key source closes this in-process: a persistent root
// key reaches custody through code the embedder runs (a KMS client, a file
// read), which can keep the bytes. Within this module, which packages can
// read a Secret is a reviewed, build-checked fact (the import rules in
// imports_test.go and Go's internal-package rule), not a runtime fence.
//
// Invariants:
//
//   - A Secret's bytes are reachable only through a closure: no field,
//     pointer, slice, map or interface that fmt, reflection, log/slog,
//     encoding/json or an error can follow leads to them. Every text form
//     of a Secret is "[redacted]". No exported method returns or reveals
//     the bytes; they are revealed inside a callback, through
//     custody/internal/reveal, which only custody, the outbound edge
//     (custody/edge) and custodytest import.
//   - No exported type of any package in this module can hold a Secret
//     (the exposure test walks every exported type of every package, by
//     go/types, including packages added later); only the Secret type
//     itself and the functions of custody that return one are exempt.
//   - A sealed record is XChaCha20-Poly1305 under a per-namespace subkey
//     (HKDF-SHA256 of the key version's root key) with associated data
//     that length-prefixes the domain, namespace, integration, handle and
//     key version. The address is recomputed from the store's key
//     columns, never read from beside the ciphertext, so a record moved to
//     another namespace, integration or handle, or to a boundary-shifted
//     address, fails to open with [CodeAddressMismatch].
//   - Sizes are bounded: a Secret is sealed only up to [MaxSecretBytes],
//     and a record longer than [MaxSealedBytes] is refused before anything
//     is allocated for it; the SQL stores read no more of a row than that.
//     [Store.List] returns at most [MaxListBindings] bindings; a
//     namespace holding more is a *StoreError.
//   - Records are sealed with the Keyset's primary version and open with
//     any version the Keyset lists; Rewrap moves a record to the primary
//     without the plaintext leaving custody. Random 192-bit nonces make
//     nonce reuse negligible for any realistic number of seals per key.
//   - Every Store (memory, SQLite, PostgreSQL) passes the one conformance
//     suite in custodytest. A Store holds ciphertext only.
//   - Every zero value fails closed: the zero Secret, Handle, Binding and
//     Keyset are refused, never treated as empty-but-valid.
//   - Every refusal is a *checkfu.Refusal with an exported Code; failures
//     of a backing store are *StoreError, never a Refusal. No error string
//     contains secret material.
//   - An [IntegrationRuntime] keeps credential records and refresh
//     machinery on its own side; custody/edge.TokenRuntime is the
//     reference. Real runtimes live under custody/, since adapters/ may
//     not import it.
//   - The package is split along the reveal boundary. Package custody is
//     the boundary itself (Secret, Handle, Binding, Keyset, sealing, Store,
//     the memory store, Native, the runtime interfaces). The authorization
//     plane (leases, approvals, capability registrations, tool arguments,
//     evidence) is custody/authz, which cannot import this package or
//     custody/internal/reveal. The outbound edge (Edge, the echo check,
//     TokenRuntime, OAuthRefresher) is custody/edge. Only custody,
//     custody/edge and custodytest import custody/internal/reveal.
//   - Package custody imports only the root package and custody/address;
//     acp/, adapters/ and egress/ never import custody.
package custody
