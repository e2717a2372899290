// Package custody holds provider credentials so that nothing a sandboxed
// agent can reach — an API response, an event, a log line, an error, a
// mount plan, model context — can read them back. What must not leak is
// structurally absent, never merely denied.
//
// A credential lives in a [Secret], known to everyone else by an opaque
// [Handle]. Native custody (D215) seals it into a [Store] under the
// custody address [Binding] (namespace, integration, handle) with a
// versioned [Keyset]; the trusted plane opens it only at the outbound edge,
// after the egress rule decision, and attaches it to the request there.
//
// Invariants:
//
//   - A Secret's bytes are reachable only through a closure: no field,
//     pointer, slice, map or interface that fmt, reflection, log/slog,
//     encoding/json or an error can follow leads to them. Every text form
//     of a Secret is "[redacted]". No exported method returns or reveals
//     the bytes; they are revealed inside a callback by this package's
//     outbound edge (and, through custody/internal/reveal, which only
//     custody/... may import, by reference runtimes).
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
//   - A credentialed tool call goes through [Edge] in one fixed order:
//     the tool arguments are validated against the tool descriptor's JSON
//     Schema; the call is matched to an exact static capability
//     registration (capability id, operation, https resource, credential
//     reference, read_only or external_effect), and anything unknown or
//     mismatched is refused before any provider contact; the outbound
//     request is built from the registration alone and decided by the
//     Connection's egress rules; the [Lease] (exact provider revision,
//     qualified capabilities, service, gateway, actor, budget, expiry) is
//     checked and spent; for an external effect the action-bound
//     [Approval] is revalidated immediately before the effect and used
//     once. Only then is the credential opened and attached, by the
//     egress client's hook, to an allowed https request. A denied call is
//     never sent and never opens the credential.
//   - Leases are revocable by id alone, independently of any
//     conversation; expired, revoked, exhausted or out-of-scope leases are
//     refused typed. An approval binds actor, grant, canonical action,
//     intended effect, scope and expiry; changing any of them refuses, and
//     an actor may not approve its own action.
//   - Approval decisions and effect results are recorded as separate
//     [Evidence] through an [EvidenceSink], each with a checkfu.Label; a
//     call whose evidence cannot be recorded returns no response.
//   - An [IntegrationRuntime] keeps credential records and refresh
//     machinery on its own side; [TokenRuntime] is the reference. Real
//     runtimes live under custody/, since adapters/ may not import it.
//   - Package custody may import egress and the root package; acp/,
//     adapters/ and egress/ never import custody.
package custody
